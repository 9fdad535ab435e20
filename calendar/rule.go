package calendar

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// Rule is one rule of a named calendar: the days it yields, read from
// text such as "last business day of month" or "every 2nd tuesday" (see
// ParseRule). A Rule is immutable.
type Rule struct {
	kind ruleKind
	// days is the set of weekdays an every rule yields, and the set an
	// nth rule counts in (unless it counts business days).
	days job.Days
	// n counts from the start of the period (1 is the first), or from its
	// end when negative (-1 is the last).
	n      int
	period period
	// months restricts a monthly nth rule to some months (bit m for month
	// m); 0 means every month.
	months uint16
}

type ruleKind uint8

const (
	everyDay    ruleKind = iota // every day in days
	businessDay                 // every business day
	nthDay                      // the nth day in days of each period
	nthBusiness                 // the nth business day of each period
)

type period uint8

const (
	monthly period = iota
	quarterly
	yearly
)

var periodNames = [...]string{"month", "quarter", "year"}

// Weekday sets the rules name.
const (
	weekdaysSet job.Days = 0x3e // monday to friday
	weekendsSet job.Days = 0x41 // saturday and sunday
)

var (
	dayWords = map[string]time.Weekday{}
	// monthWords maps the names of months, full and short, to them.
	monthWords = map[string]time.Month{}
	ordWords   = map[string]int{"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "last": -1}
)

func init() {
	for d := time.Sunday; d <= time.Saturday; d++ {
		full := strings.ToLower(d.String())
		dayWords[full] = d
		dayWords[full[:3]] = d
		dayWords[full[:2]] = d
		dayWords[full+"s"] = d
	}
	for m := time.January; m <= time.December; m++ {
		full := strings.ToLower(m.String())
		monthWords[full] = m
		monthWords[full[:3]] = m
	}
}

// ruleForms lists what ParseRule reads, for its errors.
const ruleForms = `daily, weekdays, weekends, business days, every monday[,thursday...], ` +
	`or ORDINAL UNIT [of month|quarter|year|january[,july...]] with ORDINAL first, 2nd, 3rd, last, 2nd last... ` +
	`and UNIT day, business day, weekday or a day of the week ("last business day of month", "every 2nd tuesday")`

// ParseRule reads a calendar rule. Words are case-insensitive, "the" and
// a leading "every" may be added where they read well:
//
//	daily                        every day
//	weekdays                     monday to friday
//	weekends                     saturday and sunday
//	business days                the calendar's workdays that are not holidays
//	every monday, thursday       those days of the week
//	ORDINAL UNIT [of PERIOD]     one day of each period
//
// ORDINAL is first to fifth, 1st, 2nd, 3rd, 4th... or last, second last,
// 2nd last...; UNIT is day, business day, weekday (monday to friday) or a
// day of the week; PERIOD is month (the default), quarter, year, or a list
// of months ("of january, july"). "every 2nd tuesday" is the second
// Tuesday of each month; "last business day of month" the last day of each
// month that is a business day. A period without its nth day (the 31st day
// of a 30-day month, a month without a 5th Friday) yields nothing.
func ParseRule(s string) (Rule, error) {
	r, err := parseRule(s)
	if err != nil {
		return Rule{}, fmt.Errorf("rule %q: %v", strings.TrimSpace(s), err)
	}
	return r, nil
}

func parseRule(s string) (Rule, error) {
	var words []string
	for w := range strings.FieldsSeq(strings.ToLower(strings.ReplaceAll(s, ",", " , "))) {
		if w != "the" {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return Rule{}, fmt.Errorf("empty; write one of %s", ruleForms)
	}
	every := words[0] == "every"
	if every {
		words = words[1:]
	}
	switch key := strings.Join(words, " "); {
	case key == "daily" && !every, key == "day" && every:
		return Rule{kind: everyDay, days: job.AllDays}, nil
	case key == "weekdays" && !every, key == "weekday" && every:
		return Rule{kind: everyDay, days: weekdaysSet}, nil
	case key == "weekends" && !every, (key == "weekend day" || key == "weekend") && every:
		return Rule{kind: everyDay, days: weekendsSet}, nil
	case key == "business days" && !every, key == "business day" && every:
		return Rule{kind: businessDay}, nil
	}
	if len(words) > 0 {
		if _, ok := dayWords[words[0]]; ok {
			days, rest, err := dayList(words)
			if err != nil {
				return Rule{}, err
			}
			if len(rest) > 0 {
				return Rule{}, fmt.Errorf("unexpected %q after the days of the week", strings.Join(rest, " "))
			}
			return Rule{kind: everyDay, days: days}, nil
		}
	}
	return parseNth(words)
}

// dayList reads a comma list of days of the week, and returns what follows.
func dayList(words []string) (job.Days, []string, error) {
	var days job.Days
	for i := 0; i < len(words); i++ {
		d, ok := dayWords[words[i]]
		if !ok {
			if words[i] == "," {
				continue
			}
			return days, words[i:], nil
		}
		if days&(1<<uint(d)) != 0 {
			return 0, nil, fmt.Errorf("%s given twice", d)
		}
		days |= 1 << uint(d)
	}
	return days, nil, nil
}

// parseNth reads ORDINAL UNIT [of PERIOD].
func parseNth(words []string) (Rule, error) {
	if len(words) == 0 {
		return Rule{}, fmt.Errorf("nothing after every; write one of %s", ruleForms)
	}
	n, ok := ordinal(words[0])
	if !ok {
		return Rule{}, fmt.Errorf("%q is not a rule; write one of %s", strings.Join(words, " "), ruleForms)
	}
	words = words[1:]
	if len(words) > 0 && words[0] == "last" && n > 0 {
		n, words = -n, words[1:]
	}
	r := Rule{kind: nthDay, n: n}
	switch {
	case len(words) == 0:
		return Rule{}, fmt.Errorf("the ordinal %s should be followed by day, business day, weekday or a day of the week", ordinalText(n))
	case words[0] == "day":
		r.days, words = job.AllDays, words[1:]
	case words[0] == "weekday":
		r.days, words = weekdaysSet, words[1:]
	case len(words) >= 2 && words[0] == "business" && words[1] == "day", words[0] == "workday":
		r.kind = nthBusiness
		if words[0] == "workday" {
			words = words[1:]
		} else {
			words = words[2:]
		}
	default:
		d, ok := dayWords[words[0]]
		if !ok {
			return Rule{}, fmt.Errorf("%q should be day, business day, weekday or a day of the week", words[0])
		}
		r.days, words = 1<<uint(d), words[1:]
	}
	if len(words) > 0 {
		if words[0] != "of" || len(words) == 1 {
			return Rule{}, fmt.Errorf("unexpected %q: write \"of month\", \"of quarter\", \"of year\" or \"of\" and months", strings.Join(words, " "))
		}
		if err := r.parsePeriod(words[1:]); err != nil {
			return Rule{}, err
		}
	}
	if limit := r.maxN(); n > limit || -n > limit {
		return Rule{}, fmt.Errorf("there is no %s %s in a %s (at most %d)", ordinalText(n), r.unitText(), periodNames[r.period], limit)
	}
	return r, nil
}

func (r *Rule) parsePeriod(words []string) error {
	if len(words) == 1 {
		switch words[0] {
		case "month", "months":
			return nil
		case "quarter", "quarters":
			r.period = quarterly
			return nil
		case "year", "years":
			r.period = yearly
			return nil
		}
	}
	for _, w := range words {
		if w == "," {
			continue
		}
		m, ok := monthWords[w]
		if !ok {
			return fmt.Errorf("%q is not a period: write month, quarter, year or months such as january, july", w)
		}
		if r.months&(1<<uint(m)) != 0 {
			return fmt.Errorf("%s given twice", m)
		}
		r.months |= 1 << uint(m)
	}
	return nil
}

// ordinal reads first, 2nd, last...
func ordinal(w string) (int, bool) {
	if n, ok := ordWords[w]; ok {
		return n, true
	}
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if num, ok := strings.CutSuffix(w, suf); ok && num != "" && num[0] != '0' && len(num) <= 3 {
			n, err := strconv.Atoi(num)
			if err == nil && n > 0 && ordinalSuffix(n) == suf {
				return n, true
			}
		}
	}
	return 0, false
}

func ordinalSuffix(n int) string {
	switch {
	case n%100 >= 11 && n%100 <= 13:
		return "th"
	case n%10 == 1:
		return "st"
	case n%10 == 2:
		return "nd"
	case n%10 == 3:
		return "rd"
	}
	return "th"
}

func ordinalText(n int) string {
	switch {
	case n == -1:
		return "last"
	case n < 0:
		return ordinalText(-n) + " last"
	}
	return strconv.Itoa(n) + ordinalSuffix(n)
}

// maxN is the most days of the rule's unit a period can hold.
func (r *Rule) maxN() int {
	length := [...]int{31, 92, 366}[r.period]
	if r.kind == nthBusiness || r.days == job.AllDays {
		return length
	}
	k := 0
	for d := range 7 {
		if r.days.Has(time.Weekday(d)) {
			k++
		}
	}
	return min(length, k*((length+6)/7))
}

func (r *Rule) unitText() string {
	switch {
	case r.kind == nthBusiness:
		return "business day"
	case r.days == job.AllDays:
		return "day"
	case r.days == weekdaysSet:
		return "weekday"
	}
	for d := range 7 {
		if r.days == 1<<uint(d) {
			return strings.ToLower(time.Weekday(d).String())
		}
	}
	return "day"
}

// String renders the rule canonically, as ParseRule reads it back.
func (r Rule) String() string {
	switch r.kind {
	case businessDay:
		return "business days"
	case everyDay:
		switch r.days {
		case job.AllDays:
			return "daily"
		case weekdaysSet:
			return "weekdays"
		case weekendsSet:
			return "weekends"
		}
		var names []string
		for i := 1; i <= 7; i++ { // monday first
			if d := time.Weekday(i % 7); r.days.Has(d) {
				names = append(names, strings.ToLower(d.String()))
			}
		}
		return "every " + strings.Join(names, ",")
	}
	s := ordinalText(r.n) + " " + r.unitText() + " of "
	if r.months == 0 {
		return s + periodNames[r.period]
	}
	var names []string
	for m := time.January; m <= time.December; m++ {
		if r.months&(1<<uint(m)) != 0 {
			names = append(names, strings.ToLower(m.String()))
		}
	}
	return s + strings.Join(names, ",")
}

// bounds returns the first and last dates of the rule's period that holds d.
func (r *Rule) bounds(d Date) (Date, Date) {
	y, m, _ := d.YMD()
	switch r.period {
	case quarterly:
		q := (m-1)/3*3 + 1
		return MakeDate(y, q, 1), MakeDate(y, q+3, 1) - 1
	case yearly:
		return MakeDate(y, time.January, 1), MakeDate(y+1, time.January, 1) - 1
	}
	return MakeDate(y, m, 1), MakeDate(y, m+1, 1) - 1
}

// next returns the first date from from to limit (both included) that the
// rule yields; business says whether a date is a business day.
func (r *Rule) next(from, limit Date, business func(Date) bool) (Date, bool) {
	switch r.kind {
	case everyDay:
		for d := from; d <= limit; d++ {
			if r.days.Has(d.Weekday()) {
				return d, true
			}
		}
		return 0, false
	case businessDay:
		for d := from; d <= limit; d++ {
			if business(d) {
				return d, true
			}
		}
		return 0, false
	}
	for start, end := r.bounds(from); start <= limit; start, end = r.bounds(end + 1) {
		if r.months != 0 {
			if _, m, _ := start.YMD(); r.months&(1<<uint(m)) == 0 {
				continue
			}
		}
		if d, ok := r.nth(start, end, business); ok && d >= from && d <= limit {
			return d, true
		}
	}
	return 0, false
}

// nth returns the rule's day of the period [start, end], if it has one.
func (r *Rule) nth(start, end Date, business func(Date) bool) (Date, bool) {
	in := func(d Date) bool { return r.days.Has(d.Weekday()) }
	if r.kind == nthBusiness {
		in = business
	}
	if r.n > 0 {
		k := 0
		for d := start; d <= end; d++ {
			if in(d) {
				if k++; k == r.n {
					return d, true
				}
			}
		}
		return 0, false
	}
	k := 0
	for d := end; d >= start; d-- {
		if in(d) {
			if k--; k == r.n {
				return d, true
			}
		}
	}
	return 0, false
}
