package calendar

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"

	"pgregory.net/rapid"

	"github.com/gnomon-sched/gnomon/job"
)

// The oracle decides fires without the calendar's own date arithmetic or
// DST resolution: it walks every minute in UTC, reads the local wall clock
// with the time package and applies the DST rule as stated in the package
// documentation. nominal reports whether a wall-clock reading (a time in
// UTC carrying the local fields) is a planned occurrence.
func oracle(nominal func(time.Time) bool, elapsed bool, loc *time.Location, from, to time.Time) []time.Time {
	wallOfMinute := func(c time.Time) time.Time {
		l := c.In(loc)
		return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), 0, 0, time.UTC)
	}
	anyNominal := func(lo, hi time.Time) bool { // in (lo, hi], minute steps
		for w := lo.Add(time.Minute); !w.After(hi); w = w.Add(time.Minute) {
			if nominal(w) {
				return true
			}
		}
		return false
	}
	var out []time.Time
	start := from.Truncate(time.Minute).Add(-72 * time.Hour)
	prev := wallOfMinute(start)
	highest := prev
	for c := start.Add(time.Minute); c.Before(to); c = c.Add(time.Minute) {
		w := wallOfMinute(c)
		var fires bool
		switch {
		case elapsed && !w.After(prev):
			fires = nominal(w) // the clock fell back: this reading is new in real time
		case elapsed:
			fires = anyNominal(prev, w)
		default:
			fires = w.After(highest) && anyNominal(highest, w)
		}
		if fires && !c.Before(from) {
			out = append(out, c.UTC())
		}
		prev = w
		if w.After(highest) {
			highest = w
		}
	}
	return out
}

var zones = []string{
	"UTC", "America/New_York", "Europe/London", "Europe/Paris", "Australia/Lord_Howe",
	"America/Santiago", "Asia/Beirut", "America/Havana", "Pacific/Chatham", "Asia/Kolkata",
	"Africa/Casablanca", "America/Asuncion", "Australia/Sydney", "Asia/Tehran",
}

type fataler interface{ Fatal(args ...any) }

func mustLoad(t fataler, name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// transitions returns the instants in [from, to) where loc's offset changes.
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	_, prev := from.In(loc).Zone()
	for t := from; t.Before(to); t = t.Add(15 * time.Minute) {
		if _, off := t.In(loc).Zone(); off != prev {
			out = append(out, t)
			prev = off
		}
	}
	return out
}

type oracleCase struct {
	name    string
	sched   func(*time.Location) Schedule
	nominal func(time.Time) bool
	elapsed bool
}

func minuteOfDay(w time.Time) int { return w.Hour()*60 + w.Minute() }

func batchCase(days job.Days, times ...int) oracleCase {
	cs := make([]job.Clock, len(times))
	for i, m := range times {
		cs[i] = job.Clock(m)
	}
	return oracleCase{
		name:  fmt.Sprintf("batch %v %v", days, times),
		sched: func(l *time.Location) Schedule { return NewBatch(days, cs, l) },
		nominal: func(w time.Time) bool {
			return days.Has(w.Weekday()) && slices.Contains(times, minuteOfDay(w))
		},
	}
}

func windowCase(days job.Days, start, end int, mins ...int) oracleCase {
	return oracleCase{
		name: fmt.Sprintf("window %v %d-%d %v", days, start, end, mins),
		sched: func(l *time.Location) Schedule {
			return NewWindow(days, job.Window{Start: job.Clock(start), End: job.Clock(end)}, mins, l)
		},
		elapsed: true,
		nominal: func(w time.Time) bool {
			m := minuteOfDay(w)
			if !slices.Contains(mins, w.Minute()) {
				return false
			}
			if start < end {
				return days.Has(w.Weekday()) && m >= start && m <= end
			}
			// Overnight: opens on the day it belongs to.
			yesterday := w.AddDate(0, 0, -1).Weekday()
			return (days.Has(w.Weekday()) && m >= start) || (days.Has(yesterday) && m <= end)
		},
	}
}

func cronCase(t fataler, expr string) oracleCase {
	c, err := ParseCron(expr, time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return oracleCase{
		name:    "cron " + expr,
		sched:   func(l *time.Location) Schedule { c, _ := ParseCron(expr, l); return c },
		elapsed: c.elapsed,
		nominal: func(w time.Time) bool { return cronMatches(c, w) },
	}
}

// cronMatches is the textbook reading of a compiled expression.
func cronMatches(c *Cron, w time.Time) bool {
	has := func(set uint64, v int) bool { return set&(1<<uint(v)) != 0 }
	if !has(c.sec, w.Second()) || !has(c.min, w.Minute()) || !has(c.hour, w.Hour()) || !has(c.month, int(w.Month())) {
		return false
	}
	dom, dow := has(c.dom, w.Day()), has(c.dow, int(w.Weekday()))
	// Quartz's days, by the time package: L-k, LW, nW, nL, n#k.
	y, m, d := w.Date()
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	weekday := func(day int) time.Weekday { return time.Date(y, m, day, 0, 0, 0, 0, time.UTC).Weekday() }
	if has(c.lastDays, last-d) {
		dom = true
	}
	nearest := func(n int) int {
		switch weekday(n) {
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
	for n := 1; n <= last; n++ {
		if has(c.nearest, n) || has(c.lastNearest, last-n) {
			dom = dom || d == nearest(n)
		}
	}
	if has(c.lastDow, int(w.Weekday())) && d > last-7 {
		dow = true
	}
	if has(c.nthDow[w.Weekday()], (d+6)/7) {
		dow = true
	}
	if c.domStar || c.dowStar {
		return dom && dow
	}
	return dom || dow
}

func TestOracleAroundTransitions(t *testing.T) {
	cases := []oracleCase{
		batchCase(0, 0, 30, 60+30, 2*60+30, 3*60, 23*60+59),
		batchCase(job.Days(1<<time.Sunday|1<<time.Saturday), 2*60, 2*60+15),
		windowCase(0, 0, 4*60, 0, 15, 30, 45),
		windowCase(0, 23*60, 60, 30),
		windowCase(job.Days(1<<time.Sunday), 60, 3*60, 5, 35),
		cronCase(t, "*/15 * * * *"),
		cronCase(t, "30 2 * * *"),
		cronCase(t, "0 0 * * *"),
		cronCase(t, "*/7 1-3 * * *"),
		cronCase(t, "0,30 * * * sun"),
		cronCase(t, "15 */2 1,15 * mon-fri"),
	}
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(1, 0, 0)
	for _, zn := range zones {
		loc := mustLoad(t, zn)
		trs := transitions(loc, from, to)
		if zn == "UTC" {
			trs = []time.Time{from.AddDate(0, 6, 0)}
		}
		for _, tr := range trs {
			lo, hi := tr.Add(-50*time.Hour), tr.Add(50*time.Hour)
			for _, c := range cases {
				want := oracle(c.nominal, c.elapsed, loc, lo, hi)
				got, _ := Between(c.sched(loc), lo, hi, 0)
				if !slices.Equal(got, want) {
					t.Errorf("%s in %s around %s:\n got %s\nwant %s", c.name, zn, tr.Format(time.RFC3339), fmtTimes(got, loc), fmtTimes(want, loc))
				}
			}
		}
	}
}

func fmtTimes(ts []time.Time, loc *time.Location) string {
	s := ""
	for _, t := range ts {
		s += t.In(loc).Format("01-02T15:04Z07:00 ")
	}
	return s
}

// Random schedules, zones and instants against the oracle.
func TestOracleRandom(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		zn := rapid.SampledFrom(zones).Draw(rt, "zone")
		loc := mustLoad(rt, zn)
		var c oracleCase
		switch rapid.IntRange(0, 2).Draw(rt, "kind") {
		case 0:
			times := rapid.SliceOfNDistinct(rapid.IntRange(0, 1439), 1, 4, rapid.ID[int]).Draw(rt, "times")
			slices.Sort(times)
			c = batchCase(job.Days(rapid.IntRange(0, 127).Draw(rt, "days")), times...)
		case 1:
			s := rapid.IntRange(0, 1439).Draw(rt, "start")
			e := rapid.IntRange(0, 1439).Filter(func(e int) bool { return e != s }).Draw(rt, "end")
			mins := rapid.SliceOfNDistinct(rapid.IntRange(0, 59), 1, 4, rapid.ID[int]).Draw(rt, "mins")
			slices.Sort(mins)
			c = windowCase(job.Days(rapid.IntRange(0, 127).Draw(rt, "days")), s, e, mins...)
		default:
			field := func(name string, lo, hi int) string {
				switch rapid.IntRange(0, 4).Draw(rt, name+"kind") {
				case 0:
					return "*"
				case 1:
					return fmt.Sprintf("*/%d", rapid.IntRange(1, hi-lo+1).Draw(rt, name+"step"))
				case 2:
					a := rapid.IntRange(lo, hi).Draw(rt, name+"a")
					return fmt.Sprintf("%d-%d", a, rapid.IntRange(a, hi).Draw(rt, name+"b"))
				default:
					return fmt.Sprint(rapid.IntRange(lo, hi).Draw(rt, name+"v"))
				}
			}
			dom, dow := field("dom", 1, 28), field("dow", 0, 6)
			switch rapid.IntRange(0, 9).Draw(rt, "quartzdom") {
			case 0:
				dom = "L"
			case 1:
				dom = fmt.Sprintf("L-%d", rapid.IntRange(1, 27).Draw(rt, "lk"))
			case 2:
				dom = "LW"
			case 3:
				dom = fmt.Sprintf("%dW", rapid.IntRange(1, 31).Draw(rt, "wn"))
			case 4:
				dom = "?"
			}
			switch rapid.IntRange(0, 7).Draw(rt, "quartzdow") {
			case 0:
				dow = fmt.Sprintf("%dL", rapid.IntRange(0, 7).Draw(rt, "dl"))
			case 1:
				dow = fmt.Sprintf("%d#%d", rapid.IntRange(0, 7).Draw(rt, "dn"), rapid.IntRange(1, 5).Draw(rt, "dk"))
			case 2:
				dow = "?"
			}
			expr := fmt.Sprintf("%s %s %s %s %s", field("min", 0, 59), field("hour", 0, 23), dom, field("mon", 1, 12), dow)
			if _, err := ParseCron(expr, time.UTC); err != nil && strings.Contains(err.Error(), "never fires") {
				rt.Skip(err) // a last Sunday on the 23rd: refused, rightly
			}
			c = cronCase(rt, expr)
		}
		start := time.Unix(rapid.Int64Range(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix()).Draw(rt, "from"), 0).UTC()
		end := start.Add(time.Duration(rapid.IntRange(1, 96).Draw(rt, "hours")) * time.Hour)
		want := oracle(c.nominal, c.elapsed, loc, start, end)
		got, _ := Between(c.sched(loc), start, end, 0)
		if !slices.Equal(got, want) {
			rt.Fatalf("%s in %s from %s:\n got %s\nwant %s", c.name, zn, start.Format(time.RFC3339), fmtTimes(got, loc), fmtTimes(want, loc))
		}
	})
}

// Properties every schedule has: Next is strictly after its argument, and
// nothing fires between an instant and its Next.
func TestNextProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		loc := mustLoad(rt, rapid.SampledFrom(zones).Draw(rt, "zone"))
		exprs := []string{"*/15 * * * *", "30 2 * * *", "0 0 29 2 *", "*/10 * * * * *"}
		expr := rapid.SampledFrom(exprs).Draw(rt, "expr")
		s, err := ParseCron(expr, loc)
		if err != nil {
			rt.Fatal(err)
		}
		at := time.Unix(rapid.Int64Range(0, 4e9).Draw(rt, "at"), rapid.Int64Range(0, 999999999).Draw(rt, "ns"))
		n, ok := s.Next(at)
		if !ok {
			rt.Fatalf("%s never fires after %s", expr, at)
		}
		if !n.After(at) {
			rt.Fatalf("Next(%s) = %s, not after", at, n)
		}
		if n2, _ := s.Next(n.Add(-time.Nanosecond)); !n2.Equal(n) {
			rt.Fatalf("Next just before %s is %s", n, n2)
		}
		mid := at.Add(n.Sub(at) / 2)
		if m, _ := s.Next(mid); mid.Before(n) && !m.Equal(n) {
			rt.Fatalf("Next(%s) = %s, but Next(%s) = %s", at, n, mid, m)
		}
	})
}

// Intervals against counting k = 0, 1, 2, ... from the start.
func TestIntervalRandom(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		loc := mustLoad(rt, rapid.SampledFrom(zones).Draw(rt, "zone"))
		start := DateTime{
			Year: rapid.IntRange(2020, 2027).Draw(rt, "y"), Month: time.Month(rapid.IntRange(1, 12).Draw(rt, "m")),
			Day: rapid.IntRange(1, 31).Draw(rt, "d"), Hour: rapid.IntRange(0, 23).Draw(rt, "h"), Min: rapid.IntRange(0, 59).Draw(rt, "min"),
		}
		start.Day = min(start.Day, daysIn(start.Year, start.Month))
		every := Every{N: rapid.IntRange(1, 40).Draw(rt, "n"), Unit: Unit(rapid.IntRange(1, int(Year)).Draw(rt, "unit"))}
		s := NewInterval(start, nil, &every, loc)
		at := time.Unix(rapid.Int64Range(time.Date(2019, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC).Unix()).Draw(rt, "at"), 0)
		got, ok := s.Next(at)
		// The k-th fire, counted the slow way with the time package.
		var want time.Time
		for k := 0; ; k++ {
			var w time.Time
			base := time.Date(start.Year, start.Month, start.Day, start.Hour, start.Min, 0, 0, time.UTC)
			switch every.Unit {
			case Minute, Hour:
				first := time.Unix(resolve(start.wall(), loc), 0)
				w = first.Add(time.Duration(k*every.N) * map[Unit]time.Duration{Minute: time.Minute, Hour: time.Hour}[every.Unit])
			case Day, Week:
				days := k * every.N
				if every.Unit == Week {
					days *= 7
				}
				w = time.Unix(resolve(wall(base.AddDate(0, 0, days).Unix()), loc), 0)
			default:
				months := k * every.N
				if every.Unit == Year {
					months *= 12
				}
				first := time.Date(start.Year, start.Month, 1, start.Hour, start.Min, 0, 0, time.UTC).AddDate(0, months, 0)
				d := min(start.Day, daysIn(first.Year(), first.Month()))
				w = time.Unix(resolve(wall(first.AddDate(0, 0, d-1).Unix()), loc), 0)
			}
			if w.After(at) {
				want = w.UTC()
				break
			}
		}
		if !ok || !got.Equal(want) {
			rt.Fatalf("every %s from %s in %s after %s: got %s, want %s", every, start, loc, at.UTC(), got, want)
		}
	})
}

// Quartz's day forms (L, L-k, LW, nW, nL, n#k, ?) and wrapping ranges,
// over months, in random zones, against the oracle.
func TestOracleQuartzDays(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		zn := rapid.SampledFrom(zones).Draw(rt, "zone")
		loc := mustLoad(rt, zn)
		dom := rapid.SampledFrom([]string{"*", "?", "L", "L-1", "L-3", "L-27", "LW", "1W", "15W", "30W", "31W", "L,15W", "13", "28-3", "L-3W", "L-1W,L-1", "29-L", "1-L/8"}).Draw(rt, "dom")
		dow := rapid.SampledFrom([]string{"*", "?", "5L", "0L", "fri#3", "1#1", "6#5", "sat-mon", "fri-tue", "mon-fri", "3"}).Draw(rt, "dow")
		mon := rapid.SampledFrom([]string{"*", "2", "nov-feb", "3,10", "*/3"}).Draw(rt, "month")
		hour := rapid.SampledFrom([]string{"0", "2", "22-1", "*/7", "1-3"}).Draw(rt, "hour")
		min := rapid.SampledFrom([]string{"0", "30", "59", "0,30"}).Draw(rt, "min")
		expr := fmt.Sprintf("%s %s %s %s %s", min, hour, dom, mon, dow)
		c, err := ParseCron(expr, time.UTC)
		if err != nil {
			rt.Skip(err)
		}
		oc := oracleCase{
			name:    "cron " + expr,
			sched:   func(l *time.Location) Schedule { c, _ := ParseCron(expr, l); return c },
			elapsed: c.elapsed,
			nominal: func(w time.Time) bool { return cronMatches(c, w) },
		}
		start := time.Unix(rapid.Int64Range(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Unix(), time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Unix()).Draw(rt, "from"), 0).UTC()
		end := start.Add(time.Duration(rapid.IntRange(1, 70).Draw(rt, "days")) * 24 * time.Hour)
		want := oracle(oc.nominal, oc.elapsed, loc, start, end)
		got, _ := Between(oc.sched(loc), start, end, 0)
		if !slices.Equal(got, want) {
			rt.Fatalf("%s in %s from %s:\n got %s\nwant %s", oc.name, zn, start.Format(time.RFC3339), fmtTimes(got, loc), fmtTimes(want, loc))
		}
	})
}
