package calendar

import (
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"
)

// Unit is the unit of an interval.
type Unit int

// Interval units.
const (
	Second Unit = iota
	Minute
	Hour
	Day
	Week
	Month
	Year
)

var unitNames = [...]string{"second", "minute", "hour", "day", "week", "month", "year"}

func (u Unit) String() string { return unitNames[u] }

// Every is an interval: N units.
type Every struct {
	N    int
	Unit Unit
}

// String renders the interval as the definition language writes it.
func (e Every) String() string {
	s := strconv.Itoa(e.N) + " " + e.Unit.String()
	if e.N != 1 {
		s += "s"
	}
	return s
}

// elapsed reports whether the unit counts real time rather than calendar
// days.
func (u Unit) elapsed() bool { return u <= Hour }

func (u Unit) seconds() int64 { return [...]int64{1, 60, 3600}[u] }

// maxEvery bounds intervals so that arithmetic on them cannot overflow.
const maxEvery = 1_000_000

// ParseEvery reads "N unit" with unit one of second, minute, hour, day,
// week, month, year (singular or plural).
func ParseEvery(s string) (Every, error) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return Every{}, fmt.Errorf("interval: %q should be a number and a unit, such as 30 minutes or 1 month", s)
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return Every{}, fmt.Errorf("interval: %q is not a number", f[0])
	}
	if n <= 0 || n > maxEvery {
		return Every{}, fmt.Errorf("interval: %d should be a positive number of at most %d", n, maxEvery)
	}
	name := strings.TrimSuffix(strings.ToLower(f[1]), "s")
	for i, u := range unitNames {
		if name == u {
			return Every{N: n, Unit: Unit(i)}, nil
		}
	}
	return Every{}, fmt.Errorf("interval: unknown unit %q (want seconds, minutes, hours, days, weeks, months or years)", f[1])
}

// DateTime is a wall-clock date and time without a zone.
type DateTime struct {
	Year                int
	Month               time.Month
	Day, Hour, Min, Sec int
}

func (d DateTime) wall() wall {
	return mkWall(d.Year, d.Month, d.Day, int64(d.Hour*3600+d.Min*60+d.Sec))
}

// String renders the date as the definition language writes it:
// YYYY-MM-DD HH:MM, with :SS when the seconds are not zero.
func (d DateTime) String() string {
	s := fmt.Sprintf("%04d-%02d-%02d %02d:%02d", d.Year, d.Month, d.Day, d.Hour, d.Min)
	if d.Sec != 0 {
		s += fmt.Sprintf(":%02d", d.Sec)
	}
	return s
}

// Before reports whether d is earlier than e.
func (d DateTime) Before(e DateTime) bool { return d.wall() < e.wall() }

var dateLayouts = []string{
	"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02",
}

// ParseDateTime reads a wall-clock date and time: YYYY-MM-DD, YYYY-MM-DD
// HH:MM or YYYY-MM-DD HH:MM:SS (a T may replace the space). It is read in
// the task's time zone, so it carries no offset.
func ParseDateTime(s string) (DateTime, error) {
	s = strings.TrimSpace(s)
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil && t.Year() >= 1900 {
			return DateTime{t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second()}, nil
		}
	}
	return DateTime{}, fmt.Errorf("%q is not a date and time such as 2026-03-01 04:00 (YYYY-MM-DD HH:MM[:SS], in the task's time zone; years from 1900)", s)
}

// Interval fires at start + k × every (k = 0, 1, ...) while not after end.
// Seconds, minutes and hours count real elapsed time from the start's
// instant; days and weeks keep the start's wall-clock time; months and years
// add calendar months, keeping the start's day of month or the last day of
// shorter months (31 January + 1 month = 28 or 29 February, + 2 months =
// 31 March), so that there is no drift.
type Interval struct {
	stepper
	start, end wall
	hasEnd     bool
	every      Every
	once       bool
}

// NewInterval returns an interval trigger. A nil every fires once, at start;
// a nil end never ends.
func NewInterval(start DateTime, end *DateTime, every *Every, loc *time.Location) *Interval {
	iv := &Interval{start: start.wall()}
	if end != nil {
		iv.end, iv.hasEnd = end.wall(), true
	}
	if every == nil {
		iv.once = true
	} else {
		iv.every = *every
	}
	iv.stepper = stepper{loc: loc, walls: iv.walls}
	return iv
}

// IntervalOf compiles the start_date, end_date and interval attributes.
func IntervalOf(start, end, every string, loc *time.Location) (*Interval, error) {
	s, err := ParseDateTime(start)
	if err != nil {
		return nil, fmt.Errorf("start_date: %w", err)
	}
	var ep *DateTime
	if end != "" {
		e, err := ParseDateTime(end)
		if err != nil {
			return nil, fmt.Errorf("end_date: %w", err)
		}
		if e.Before(s) {
			return nil, fmt.Errorf("end_date: %s is before start_date %s", e, s)
		}
		ep = &e
	}
	var ev *Every
	if every != "" {
		e, err := ParseEvery(every)
		if err != nil {
			return nil, err
		}
		ev = &e
	}
	return NewInterval(s, ep, ev, loc), nil
}

// Next implements Schedule.
func (iv *Interval) Next(t time.Time) (time.Time, bool) {
	if iv.once || !iv.every.Unit.elapsed() {
		return iv.stepper.Next(t)
	}
	// Real elapsed time from the first fire.
	first := resolve(iv.start, iv.loc)
	step := int64(iv.every.N) * iv.every.Unit.seconds()
	c := first
	if ts := t.Unix(); ts >= first {
		c = first + ((ts-first)/step+1)*step
	}
	if iv.hasEnd && c > resolve(iv.end, iv.loc) {
		return time.Time{}, false
	}
	return time.Unix(c, 0).UTC(), true
}

// walls yields the nominal times of calendar-unit intervals.
func (iv *Interval) walls(from wall) iter.Seq[wall] {
	return func(yield func(wall) bool) {
		if iv.once {
			if iv.start >= from {
				yield(iv.start)
			}
			return
		}
		k := iv.estimate(from)
		for ; ; k++ {
			w := iv.at(k)
			if iv.hasEnd && w > iv.end {
				return
			}
			if w >= from && !yield(w) {
				return
			}
		}
	}
}

// at returns the k-th nominal time.
func (iv *Interval) at(k int64) wall {
	n := k * int64(iv.every.N)
	switch iv.every.Unit {
	case Day:
		return iv.start + wall(n*day)
	case Week:
		return iv.start + wall(7*n*day)
	}
	if iv.every.Unit == Year {
		n *= 12
	}
	y, m, d := iv.start.date()
	_, sec := iv.start.days()
	months := int64(y)*12 + int64(m-1) + n
	ny, nm := int(months/12), time.Month(months%12+1)
	return mkWall(ny, nm, min(d, daysIn(ny, nm)), sec)
}

// estimate returns a k whose nominal time is not after from (or 0).
func (iv *Interval) estimate(from wall) int64 {
	if from <= iv.start {
		return 0
	}
	var k int64
	switch iv.every.Unit {
	case Day, Week:
		per := int64(day)
		if iv.every.Unit == Week {
			per *= 7
		}
		k = int64(from-iv.start) / (per * int64(iv.every.N))
	default: // months and years: count calendar months
		y0, m0, _ := iv.start.date()
		y1, m1, _ := from.date()
		per := int64(iv.every.N)
		if iv.every.Unit == Year {
			per *= 12
		}
		k = (int64(y1-y0)*12+int64(m1-m0))/per + 1
	}
	for k > 0 && iv.at(k) > from {
		k--
	}
	return k
}
