package calendar

import (
	"fmt"
	"iter"
	"math/bits"
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
	// domStar and dowStar are set when the field starts with '*': then the
	// other day field alone decides (Vixie cron); when both are
	// restricted, a day matches either.
	domStar, dowStar bool
}

type cronField struct {
	name     string
	min, max int
	names    []string // names[i] is the name of value min+i
}

var (
	fSecond = cronField{name: "second", min: 0, max: 59}
	fMinute = cronField{name: "minute", min: 0, max: 59}
	fHour   = cronField{name: "hour", min: 0, max: 23}
	fDom    = cronField{name: "day-of-month", min: 1, max: 31}
	fMonth  = cronField{name: "month", min: 1, max: 12,
		names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}}
	// Day of week accepts 7 for Sunday, as most crons do.
	fDow = cronField{name: "day-of-week", min: 0, max: 7,
		names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}}
)

var shortcuts = map[string]string{
	"@yearly":   "0 0 1 1 *",
	"@annually": "0 0 1 1 *",
	"@monthly":  "0 0 1 * *",
	"@weekly":   "0 0 * * 0",
	"@daily":    "0 0 * * *",
	"@midnight": "0 0 * * *",
	"@hourly":   "0 * * * *",
}

// ParseCron compiles a cron expression in loc: five fields (minute hour
// day-of-month month day-of-week), or six with seconds first, or one of
// @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly. Fields
// take *, values, names (jan-dec, sun-sat), ranges a-b, lists a,b and steps
// */n, a-b/n, a/n.
func ParseCron(expr string, loc *time.Location) (*Cron, error) {
	src := strings.TrimSpace(expr)
	if strings.HasPrefix(src, "@") {
		s, ok := shortcuts[strings.ToLower(src)]
		if !ok {
			return nil, fmt.Errorf("cron: unknown shortcut %q (want @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)", src)
		}
		src = s
	}
	fields := strings.Fields(src)
	var specs []cronField
	switch len(fields) {
	case 5:
		fields = append([]string{"0"}, fields...)
		specs = []cronField{fSecond, fMinute, fHour, fDom, fMonth, fDow}
	case 6:
		specs = []cronField{fSecond, fMinute, fHour, fDom, fMonth, fDow}
	default:
		return nil, fmt.Errorf("cron: %q has %d fields, want 5 (minute hour day-of-month month day-of-week) or 6 (with seconds first)", expr, len(fields))
	}
	var sets [6]uint64
	for i, f := range fields {
		set, err := specs[i].parse(f)
		if err != nil {
			return nil, err
		}
		sets[i] = set
	}
	if sets[5]&(1<<7) != 0 {
		sets[5] = sets[5]&^(1<<7) | 1
	}
	c := &Cron{
		sec: sets[0], min: sets[1], hour: sets[2], dom: sets[3], month: sets[4], dow: sets[5],
		domStar: strings.HasPrefix(fields[3], "*"),
		dowStar: strings.HasPrefix(fields[5], "*"),
	}
	// The day of month alone decides when the day of week is '*'.
	if c.dowStar && !c.domStar && !c.possible() {
		return nil, fmt.Errorf("cron: %q never fires: no month has day %s", expr, fields[3])
	}
	c.stepper = stepper{
		loc:     loc,
		elapsed: strings.HasPrefix(fields[0], "*") || strings.HasPrefix(fields[1], "*") || strings.HasPrefix(fields[2], "*"),
		walls:   c.walls,
	}
	return c, nil
}

// possible reports whether some selected month has a selected day.
func (c *Cron) possible() bool {
	for m := 1; m <= 12; m++ {
		if c.month&(1<<m) == 0 {
			continue
		}
		limit := daysIn(2000, time.Month(m)) // a leap year: 29 February counts
		if c.dom&(uint64(1)<<(limit+1)-2) != 0 {
			return true
		}
	}
	return false
}

func (f cronField) parse(s string) (uint64, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("cron: %s field %q: %s", f.name, s, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return 0, bad("empty")
	}
	var set uint64
	for item := range strings.SplitSeq(s, ",") {
		rng, stepText, hasStep := strings.Cut(item, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n <= 0 {
				return 0, bad("step %q should be a positive number", stepText)
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
				if hi < lo {
					return 0, bad("range %s goes backwards", rng)
				}
			} else if hasStep {
				hi = f.max // a/n means a, a+n, ... up to the maximum
				if f.name == "day-of-week" {
					hi = 6 // Sunday is 0: 7 would give it again
				}
			}
		}
		for v := lo; v <= hi; v += step {
			set |= 1 << uint(v)
		}
	}
	return set, nil
}

func (f cronField) value(s string) (int, error) {
	for i, n := range f.names {
		if strings.EqualFold(s, n) {
			return f.min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%q is not a number or a name", s)
	}
	if v < f.min || v > f.max {
		return 0, fmt.Errorf("value %d out of range %d-%d", v, f.min, f.max)
	}
	return v, nil
}

// dayMatches applies the day-of-month / day-of-week rule.
func (c *Cron) dayMatches(days int64) bool {
	_, _, d := civilFromDays(days)
	domOK := c.dom&(1<<uint(d)) != 0
	dowOK := c.dow&(1<<uint(weekdayOf(days))) != 0
	switch {
	case c.domStar || c.dowStar:
		return domOK && dowOK
	default:
		return domOK || dowOK
	}
}

// horizon bounds the search for the next matching day: the Gregorian
// calendar repeats every 400 years, dates and weekdays alike (146097 days,
// a whole number of weeks), so a day that matches is found within one
// cycle or never. 29 February on a Sunday may be 40 years away (2096 to
// 2136). ParseCron refuses the expressions that never match: only a day
// of month that no selected month has can (every date falls on every
// weekday within a cycle).
const horizon = 146097 + 1

func (c *Cron) walls(from wall) iter.Seq[wall] {
	return func(yield func(wall) bool) {
		d0, s0 := from.days()
		for d := d0; d < d0+horizon; d++ {
			y, m, dd := civilFromDays(d)
			if c.month&(1<<uint(m)) == 0 {
				// Jump to the first of the next month.
				d += int64(daysIn(int(y), time.Month(m)) - int(dd))
				continue
			}
			if !c.dayMatches(d) {
				continue
			}
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
