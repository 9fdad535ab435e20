package calendar

import (
	"errors"
	"fmt"
	"iter"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Cron is a compiled cron expression.
type Cron struct {
	stepper
	sec, min, hour uint64 // bit i: value i matches
	dom            uint64 // bits 1-31
	month          uint64 // bits 1-12
	dow            uint64 // bits 0-6, Sunday = 0
	// domStar and dowStar are set when the field starts with '*' or is
	// '?': then the other day field alone decides (Vixie cron); when both
	// are restricted, a day matches either.
	domStar, dowStar bool
	// The days of month that depend on the month (Quartz): lastDays bit
	// k is the day k before the last (L is bit 0, L-3 bit 3); nearest bit
	// n the weekday nearest day n (nW); lastNearest bit k the weekday
	// nearest the day k before the last (LW is bit 0, L-3W bit 3).
	lastDays, nearest, lastNearest uint64
	// The days of week that depend on the month: lastDow bit w is the last
	// weekday w (5L), nthDow[w] bit k its kth (5#3).
	lastDow uint64
	nthDow  [7]uint64
	// years, when set, holds the years of the seventh field: bit i of
	// word i/64 is year 1970+i.
	years *[3]uint64
	// every is the period of @every, in seconds; the fields are unused.
	every int64
}

type cronField struct {
	name     string
	min, max int
	names    []string // names[i] is the name of value min+i
	long     []string // long[i] is its name in full (friday, january)
}

var (
	fSecond = cronField{name: "second", min: 0, max: 59}
	fMinute = cronField{name: "minute", min: 0, max: 59}
	fHour   = cronField{name: "hour", min: 0, max: 23}
	fDom    = cronField{name: "day-of-month", min: 1, max: 31}
	fMonth  = cronField{name: "month", min: 1, max: 12,
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"},
		long:  []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}}
	// Day of week accepts 7 for Sunday, as most crons do.
	fDow = cronField{name: "day-of-week", min: 0, max: 7,
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"},
		long:  []string{"sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"}}
	// Years as Quartz takes them.
	fYear = cronField{name: "year", min: 1970, max: 2099}
)

var shortcuts = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
	// gronx's.
	"@always":      "* * * * *",
	"@everysecond": "* * * * * *",
	"@5minutes":    "*/5 * * * *",
	"@10minutes":   "*/10 * * * *",
	"@15minutes":   "*/15 * * * *",
	"@30minutes":   "0,30 * * * *",
}

// ParseCron compiles a cron expression in loc: five fields (minute hour
// day-of-month month day-of-week), six with seconds first, or seven with
// seconds first and a year last; or one of @yearly, @annually, @monthly,
// @weekly, @daily, @midnight, @hourly, gronx's @always, @everysecond,
// @5minutes, @10minutes, @15minutes, @30minutes, or @every DURATION.
// Fields take *, values, names (jan-dec, sun-sat, also in full), ranges
// a-b (wrapping when b is below a: fri-mon, 22-2; a-L in the day of
// month), lists a,b and steps */n, a-b/n, a/n; the day fields take ? for
// *, and Quartz's L, L-n, LW, L-nW, nW (day of month), nL and n#k (day of
// week). docs/definitions.md, "Cron expressions", gives their meaning.
func ParseCron(expr string, loc *time.Location) (*Cron, error) {
	src := strings.TrimSpace(expr)
	if f := strings.Fields(src); len(f) > 0 && strings.EqualFold(f[0], "@every") {
		return parseEvery(expr, f[1:], loc)
	}
	if strings.HasPrefix(src, "@") {
		s, ok := shortcuts[strings.ToLower(src)]
		if !ok {
			return nil, fmt.Errorf("cron: unknown shortcut %q (want @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly, @always, @everysecond, @5minutes, @10minutes, @15minutes, @30minutes or @every DURATION)", src)
		}
		src = s
	}
	fields := strings.Fields(src)
	switch len(fields) {
	case 5:
		fields = append([]string{"0"}, fields...)
	case 6, 7:
	default:
		return nil, fmt.Errorf("cron: %q has %d fields, want 5 (minute hour day-of-month month day-of-week), 6 (with seconds first) or 7 (with seconds first and a year last)", expr, len(fields))
	}
	c, err := compileCron(fields)
	if err != nil {
		if len(fields) == 6 && len(strings.Fields(src)) == 6 && yearLike.MatchString(fields[5]) {
			// A year last, as gronx and cronexpr write them after five fields?
			with := append([]string{"0"}, fields...)
			if _, yerr := compileCron(with); yerr == nil {
				return nil, fmt.Errorf("%v (6 fields are read with seconds first, as Quartz and robfig/cron read them; with a year last, as gronx and cronexpr write them, add a second in front: %q)",
					err, strings.Join(with, " "))
			}
		}
		if len(fields) == 6 && len(strings.Fields(src)) == 6 {
			// Seconds last, as croniter writes them?
			rot := append([]string{fields[5]}, fields[:5]...)
			if _, rerr := compileCron(rot); rerr == nil {
				return nil, fmt.Errorf("%v (6 fields are read with seconds first, as Quartz and robfig/cron read them; with seconds last, as croniter writes them, move the last field to the front: %q)",
					err, strings.Join(rot, " "))
			}
		}
		return nil, err
	}
	// The day of month alone decides when the day of week is '*'.
	if c.dowStar && !c.domStar && !c.possible() {
		return nil, fmt.Errorf("cron: %q never fires: no month has day %s", expr, fields[3])
	}
	if !c.firesSomeDay() {
		return nil, fmt.Errorf("cron: %q never fires: no day matches both its day fields in the months and years it names", expr)
	}
	c.stepper = stepper{
		loc:     loc,
		elapsed: strings.HasPrefix(fields[0], "*") || strings.HasPrefix(fields[1], "*") || strings.HasPrefix(fields[2], "*"),
		walls:   c.walls,
	}
	return c, nil
}

// compileCron reads six or seven fields.
func compileCron(fields []string) (*Cron, error) {
	specs := []cronField{fSecond, fMinute, fHour, fDom, fMonth, fDow, fYear}
	c := &Cron{}
	var sets [7]uint64
	for i, f := range fields {
		if f == "?" {
			if i != 3 && i != 5 {
				return nil, fmt.Errorf("cron: %s field %q: ? stands for * in a day field (day-of-month, day-of-week) only", specs[i].name, f)
			}
			f = "*"
		}
		var err error
		switch i {
		case 3:
			// a-L (croniter): the ath to the last day, which a-31 is in
			// every month.
			g := toLastDay(f)
			if sets[i], err = specs[i].parse(g, c.domItem); err != nil && g != f {
				err = errors.New(strings.Replace(err.Error(), strconv.Quote(g), strconv.Quote(f), 1))
			}
		case 5:
			sets[i], err = specs[i].parse(f, c.dowItem)
		case 6:
			c.years = new([3]uint64)
			_, err = specs[i].parseInto(f, nil, func(v int) { c.years[(v-1970)/64] |= 1 << uint((v-1970)%64) })
		default:
			sets[i], err = specs[i].parse(f, nil)
		}
		if err != nil {
			return nil, err
		}
	}
	if sets[5]&(1<<7) != 0 {
		sets[5] = sets[5]&^(1<<7) | 1
	}
	c.sec, c.min, c.hour, c.dom, c.month, c.dow = sets[0], sets[1], sets[2], sets[3], sets[4], sets[5]
	c.domStar = strings.HasPrefix(fields[3], "*") || fields[3] == "?"
	c.dowStar = strings.HasPrefix(fields[5], "*") || fields[5] == "?"
	return c, nil
}

// toLastDay writes the ranges of a day-of-month field that end at the
// month's last day (29-L, 1-L/8) as ranges to the 31st, which they are in
// every month.
func toLastDay(field string) string {
	items := strings.Split(field, ",")
	for i, item := range items {
		if m := rangeToLast.FindStringSubmatch(item); m != nil {
			items[i] = m[1] + "-31" + m[2]
		}
	}
	return strings.Join(items, ",")
}

// rangeToLast is a range of days to the last (29-L, 1-L/8); yearLike a
// field that can only be a year.
var (
	rangeToLast = regexp.MustCompile(`^(\d+)-[lL](/\d+)?$`)
	yearLike    = regexp.MustCompile(`^\d{4}(-\d{4})?(/\d+)?$`)
)

// parseEvery reads @every DURATION: instants that are whole multiples of
// the duration since 1970-01-01 00:00:00 UTC, whatever the zone.
func parseEvery(expr string, rest []string, loc *time.Location) (*Cron, error) {
	if len(rest) != 1 {
		return nil, fmt.Errorf("cron: %q: @every takes one duration, such as @every 90s, @every 15m or @every 1h30m", strings.TrimSpace(expr))
	}
	d, err := time.ParseDuration(rest[0])
	if err != nil || d < time.Second || d%time.Second != 0 {
		return nil, fmt.Errorf("cron: @every %q: want a duration of whole seconds, at least 1s, such as 90s, 15m or 1h30m", rest[0])
	}
	return &Cron{every: int64(d / time.Second), stepper: stepper{loc: loc}}, nil
}

// Next implements Schedule.
func (c *Cron) Next(t time.Time) (time.Time, bool) {
	if c.every > 0 {
		s := t.Unix()
		q := s / c.every
		if s%c.every != 0 && s < 0 {
			q--
		}
		return time.Unix((q+1)*c.every, 0).UTC(), true
	}
	return c.stepper.Next(t)
}

// possible reports whether some selected month has a selected day.
func (c *Cron) possible() bool {
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) == 0 {
			continue
		}
		limit := daysIn(2000, time.Month(m)) // a leap year: 29 February counts
		if c.dom&(uint64(1)<<(limit+1)-2) != 0 || c.lastNearest&(uint64(1)<<limit-1) != 0 || c.lastDays&(uint64(1)<<limit-1) != 0 ||
			c.nearest&(uint64(1)<<(limit+1)-2) != 0 {
			return true
		}
	}
	return false
}

// firesSomeDay reports whether some day matches, within the years of the
// year field or a 400-year cycle, past which the calendar repeats.
func (c *Cron) firesSomeDay() bool {
	from, to := daysFromCivil(2000, 1, 1), daysFromCivil(2400, 1, 1)
	if c.years != nil {
		from, to = daysFromCivil(1970, 1, 1), daysFromCivil(2100, 1, 1)
	}
	for range c.days(from, to) {
		return true
	}
	return false
}

// domItem reads the Quartz items of the day of month: L, L-n, LW, L-nW,
// nW.
func (c *Cron) domItem(f cronField, item string) (bool, error) {
	u := strings.ToUpper(item)
	switch {
	case u == "L":
		c.lastDays |= 1
	case u == "LW" || u == "WL":
		c.lastNearest |= 1
	case strings.HasPrefix(u, "L-"):
		digits, weekday := strings.CutSuffix(u[2:], "W")
		n, err := strconv.Atoi(digits)
		if err != nil || n < 1 || n > 30 || digits[0] == '+' {
			return true, fmt.Errorf("%q: L-n and L-nW want n from 1 to 30 (L-3 is three days before the last of the month, L-3W the weekday nearest it)", item)
		}
		if weekday {
			c.lastNearest |= 1 << uint(n)
		} else {
			c.lastDays |= 1 << uint(n)
		}
	case len(u) > 1 && strings.HasSuffix(u, "W"):
		n, err := f.value(u[:len(u)-1])
		if err != nil {
			return true, fmt.Errorf("%q: nW wants a day from 1 to 31 (15W is the weekday nearest the 15th): %v", item, err)
		}
		c.nearest |= 1 << uint(n)
	case strings.ContainsAny(u, "LW#"):
		return true, fmt.Errorf("%q is not a day: the day of month takes L, L-n, LW, L-nW and nW (15W), and L as the end of a range (29-L, 1-L/8), not elsewhere in ranges or steps", item)
	default:
		return false, nil
	}
	return true, nil
}

// dowItem reads the Quartz items of the day of week: nL, n#k.
func (c *Cron) dowItem(f cronField, item string) (bool, error) {
	u := strings.ToUpper(item)
	switch {
	case u == "L":
		return true, fmt.Errorf("an L alone is ambiguous in the day of week (Quartz reads it as Saturday): write sat, or 5L for the last Friday of the month")
	case len(u) > 1 && strings.HasSuffix(u, "L"):
		w, err := f.value(u[:len(u)-1])
		if err != nil {
			return true, fmt.Errorf("%q: nL wants a day of week (5L or friL is the last Friday of the month): %v", item, err)
		}
		c.lastDow |= 1 << uint(w%7)
	case strings.Contains(u, "#"):
		a, b, _ := strings.Cut(u, "#")
		w, err := f.value(a)
		if err != nil {
			return true, fmt.Errorf("%q: n#k wants a day of week before # (5#3 or fri#3 is the third Friday of the month): %v", item, err)
		}
		k, err := strconv.Atoi(b)
		if err != nil || k < 1 || k > 5 || b[0] == '+' {
			return true, fmt.Errorf("%q: n#k wants k from 1 to 5 after # (fri#3 is the third Friday of the month)", item)
		}
		c.nthDow[w%7] |= 1 << uint(k)
	default:
		return false, nil
	}
	return true, nil
}

// parse reads a field into a set, bit v for value v. special, when set,
// reads the items its field has besides values, ranges and steps,
// reporting whether it took the item.
func (f cronField) parse(s string, special func(cronField, string) (bool, error)) (uint64, error) {
	return f.parseInto(s, special, nil)
}

// parseInto reads a field, giving each value to add, or into the set it
// returns when add is nil.
func (f cronField) parseInto(s string, special func(cronField, string) (bool, error), add func(int)) (uint64, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("cron: %s field %q: %s", f.name, s, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return 0, bad("empty")
	}
	var set uint64
	put := func(v int) {
		if add != nil {
			add(v)
		} else {
			set |= 1 << uint(v)
		}
	}
	// The values the field cycles through: day of week 0-6, 7 being 0.
	span := f.max - f.min + 1
	if f.name == "day-of-week" {
		span = 7
	}
	for item := range strings.SplitSeq(s, ",") {
		if special != nil && item != "" {
			took, err := special(f, item)
			if err != nil {
				return 0, bad("%v", err)
			}
			if took {
				continue
			}
		}
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return 0, bad("step %q should be a positive number", stepText)
			}
			if n > span {
				return 0, bad("step %d is larger than the field, which has %d values (%d-%d)", n, span, f.min, f.min+span-1)
			}
			step = n
		}
		lo, hi := f.min, f.max
		switch {
		case rng == "*":
			if f.name == "day-of-week" {
				hi = 6
			}
		case rng == "":
			return 0, bad("empty item")
		default:
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if lo, err = f.value(a); err != nil {
				return 0, bad("%v", err)
			}
			hi = lo
			if isRange {
				if hi, err = f.value(b); err != nil {
					return 0, bad("%v", err)
				}
				if f.name == "day-of-week" && lo == 7 {
					lo = 0 // 7-2 is Sunday to Tuesday
				}
				if hi < lo && f.name == "year" {
					return 0, bad("range %s goes backwards", rng)
				}
				if hi < lo {
					// A range that wraps: fri-mon, 22-2, nov-feb.
					if f.name == "day-of-week" && hi == 0 {
						hi = 7
					} else {
						hi += span
					}
				}
			} else if hasStep {
				hi = f.max // a/n means a, a+n, ... up to the maximum
				if f.name == "day-of-week" {
					hi = 6 // Sunday is 0: 7 would give it again
				}
			}
		}
		for v := lo; v <= hi; v += step {
			w := v
			if w > f.max || f.name == "day-of-week" && v > 7 {
				w = f.min + (v-f.min)%span
			}
			put(w)
		}
	}
	return set, nil
}

func (f cronField) value(s string) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) || i < len(f.long) && strings.EqualFold(s, f.long[i]) {
			return f.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%q is not a number or a name", s)
	}
	if v < f.min || v > f.max {
		return 0, fmt.Errorf("value %d out of range %d-%d", v, f.min, f.max)
	}
	return v, nil
}

// dayMatches applies the day-of-month / day-of-week rule.
func (c *Cron) dayMatches(days int64) bool {
	y, m, d := civilFromDays(days)
	wd := weekdayOf(days)
	domOK := c.dom&(1<<uint(d)) != 0
	dowOK := c.dow&(1<<uint(wd)) != 0
	if c.lastDays != 0 || c.nearest != 0 || c.lastNearest != 0 || c.lastDow != 0 || c.nthDow != [7]uint64{} {
		last := int64(daysIn(int(y), time.Month(m)))
		if !domOK && c.lastDays&(1<<uint(last-d)) != 0 {
			domOK = true
		}
		if !domOK && c.lastNearest != 0 {
			// The weekday nearest day last-k is last-k-2 to last-k+2.
			for k := range setBits(c.lastNearest) {
				if n := last - int64(k); n >= 1 && n >= d-2 && n <= d+2 && nearestWeekday(n, last, wd, d) == d {
					domOK = true
					break
				}
			}
		}
		if !domOK && c.nearest != 0 {
			// The weekday nearest day n is n-2 to n+2.
			for n := max(1, d-2); n <= min(last, d+2); n++ {
				if c.nearest&(1<<uint(n)) != 0 && nearestWeekday(n, last, wd, d) == d {
					domOK = true
					break
				}
			}
		}
		if !dowOK && c.lastDow&(1<<uint(wd)) != 0 && d+7 > last {
			dowOK = true
		}
		if !dowOK && c.nthDow[wd]&(1<<uint((d-1)/7+1)) != 0 {
			dowOK = true
		}
	}
	switch {
	case c.domStar || c.dowStar:
		return domOK && dowOK
	default:
		return domOK || dowOK
	}
}

// nearestWeekday returns the weekday (Monday to Friday) of the month
// nearest day n, in a month of last days, given that day d is a wd: a
// Saturday gives the Friday before, a Sunday the Monday after, neither
// leaving the month (Saturday the 1st gives Monday the 3rd, Sunday the
// last the Friday before).
func nearestWeekday(n, last int64, wd time.Weekday, d int64) int64 {
	w := time.Weekday((int64(wd) + (n-d)%7 + 7) % 7) // the weekday of day n
	switch w {
	case time.Saturday:
		if n == 1 {
			return 3
		}
		return n - 1
	case time.Sunday:
		if n == last {
			return n - 2
		}
		return n + 1
	}
	return n
}

// hasYear reports whether the year field takes year y.
func (c *Cron) hasYear(y int64) bool {
	if c.years == nil {
		return true
	}
	i := y - 1970
	return i >= 0 && i < 130 && c.years[i/64]&(1<<uint(i%64)) != 0
}

// days yields the matching days in [from, to).
func (c *Cron) days(from, to int64) iter.Seq[int64] {
	return func(yield func(int64) bool) {
		for d := from; d < to; d++ {
			y, m, dd := civilFromDays(d)
			if !c.hasYear(y) {
				if c.years != nil && y >= 2099 {
					return
				}
				d = daysFromCivil(y+1, 1, 1) - 1
				continue
			}
			if c.month&(1<<uint(m)) == 0 {
				// Jump to the first of the next month.
				d += int64(daysIn(int(y), time.Month(m)) - int(dd))
				continue
			}
			if c.dayMatches(d) && !yield(d) {
				return
			}
		}
	}
}

// horizon bounds the search for the next matching day: the Gregorian
// calendar repeats every 400 years, dates and weekdays alike (146097 days,
// a whole number of weeks), so a day that matches is found within one
// cycle or never. 29 February on a Sunday may be 40 years away (2096 to
// 2136). ParseCron refuses the expressions whose days never match; those
// with a year field end after their last year.
const horizon = 146097 + 1

func (c *Cron) walls(from wall) iter.Seq[wall] {
	return func(yield func(wall) bool) {
		d0, s0 := from.days()
		for d := range c.days(d0, d0+horizon) {
			first := int64(0)
			if d == d0 {
				first = s0
			}
			for h := range setBits(c.hour) {
				if int64(h)*3600+3599 < first {
					continue
				}
				for mi := range setBits(c.min) {
					base := int64(h)*3600 + int64(mi)*60
					if base+59 < first {
						continue
					}
					for s := range setBits(c.sec) {
						if base+int64(s) < first {
							continue
						}
						if !yield(wall(d*day + base + int64(s))) {
							return
						}
					}
				}
			}
		}
	}
}

func setBits(x uint64) iter.Seq[int] {
	return func(yield func(int) bool) {
		for x != 0 {
			i := bits.TrailingZeros64(x)
			if !yield(i) {
				return
			}
			x &^= 1 << uint(i)
		}
	}
}
