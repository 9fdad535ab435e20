package web

import (
	"net/http"
	"time"

	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// calendarsData is the list of named calendars.
type calendarsData struct {
	Calendars []calendarRow
}

// calendarRow is a named calendar in the list: its definition, the tasks
// that name it, and its next days from today.
type calendarRow struct {
	Def        *job.Calendar
	UsedBy     []string
	HolidaysOf []string
	Next       []calendar.Date
	// Year is how many days it holds in the year from today.
	Year int
	// More says the year holds more than it counts (see calendarDays).
	More bool
}

// calendarDays bounds the days of a year a page counts or marks.
const calendarDays = 366

// nextDays is how many of its next days the list shows for a calendar.
const nextDays = 3

func (u *UI) calendars(r *http.Request) (string, any, error) {
	today := calendar.DateOf(u.cfg.Scheduler.Now(), u.cfg.Location)
	y, m, d := today.YMD()
	end := calendar.MakeDate(y+1, m, d) - 1
	var data calendarsData
	for _, ci := range u.cfg.Scheduler.View().Calendars() {
		row := calendarRow{Def: ci.Calendar, UsedBy: ci.UsedBy, HolidaysOf: ci.HolidaysOf}
		if ci.Days != nil {
			days, more := ci.Days.Between(today, end, calendarDays)
			row.Year, row.More = len(days), more
			row.Next = days[:min(nextDays, len(days))]
		}
		data.Calendars = append(data.Calendars, row)
	}
	return "Calendars", data, nil
}

// calendarData is one calendar's page: its definition, a year of its
// days as month grids, and the occurrences it takes from the tasks that
// name it as their exclude_calendar.
type calendarData struct {
	calendarRow
	// From is the first month shown (YYYY-MM), Earlier and Later those
	// of the years before and after it.
	From, Earlier, Later string
	Months               []monthGrid
	Excluded             []excludedFire
	// ExcludedTo is the end of the range Excluded covers; ExcludedMore
	// says it holds more than it lists.
	ExcludedTo   time.Time
	ExcludedMore bool
}

// monthGrid is a month as a wall calendar draws it: weeks from Monday,
// zero where a day belongs to the month before or after.
type monthGrid struct {
	Title string
	Weeks [][7]dayCell
}

type dayCell struct {
	Day   int // 0: not a day of this month
	Date  string
	Held  bool
	Today bool
}

// excludedFire is an occurrence of a task that a calendar it excludes
// keeps from running: it will be recorded skipped.
type excludedFire struct {
	Task string
	At   time.Time
}

// excludedSpan is how far ahead a calendar's page looks for the
// occurrences it excludes, and excludedMax how many it lists.
const (
	excludedSpan = 31 * 24 * time.Hour
	excludedMax  = 50
	excludedScan = 20000
)

func (u *UI) calendarPage(r *http.Request) (string, any, error) {
	name := r.PathValue("name")
	v := u.cfg.Scheduler.View()
	ci, found := v.Calendar(name)
	if !found {
		return "", nil, notFound("calendar %s not found", name)
	}
	now := u.cfg.Scheduler.Now()
	today := calendar.DateOf(now, u.cfg.Location)
	y, m, _ := today.YMD()
	if s := r.URL.Query().Get("from"); s != "" {
		t, err := time.Parse("2006-01", s)
		if err != nil {
			return "", nil, badRequest("from: %q is not a month such as 2026-11", s)
		}
		y, m = t.Year(), t.Month()
	}
	first := calendar.MakeDate(y, m, 1)
	end := calendar.MakeDate(y+1, m, 1) - 1
	d := calendarData{calendarRow: calendarRow{Def: ci.Calendar, UsedBy: ci.UsedBy, HolidaysOf: ci.HolidaysOf}}
	d.From = first.String()[:7]
	d.Earlier = calendar.MakeDate(y-1, m, 1).String()[:7]
	d.Later = calendar.MakeDate(y+1, m, 1).String()[:7]
	held := map[calendar.Date]bool{}
	if ci.Days != nil {
		days, more := ci.Days.Between(first, end, calendarDays)
		for _, day := range days {
			held[day] = true
		}
		d.Year, d.More = len(days), more
		d.Next, _ = ci.Days.Between(today, today+calendarDays, nextDays)
	}
	for k := range 12 {
		d.Months = append(d.Months, monthOf(calendar.MakeDate(y, m+time.Month(k), 1), held, today))
	}
	d.ExcludedTo = u.local(now.Add(excludedSpan))
	d.Excluded, d.ExcludedMore = u.excludedBy(v, ci, now, now.Add(excludedSpan))
	return "Calendar " + name, d, nil
}

// monthOf draws the month that begins on first, marking the days held
// and today.
func monthOf(first calendar.Date, held map[calendar.Date]bool, today calendar.Date) monthGrid {
	y, m, _ := first.YMD()
	g := monthGrid{Title: time.Date(y, m, 1, 0, 0, 0, 0, time.UTC).Format("January 2006")}
	col := (int(first.Weekday()) + 6) % 7 // Monday first
	var week [7]dayCell
	for day := first; ; day++ {
		dy, dm, dd := day.YMD()
		if dm != m || dy != y {
			break
		}
		week[col] = dayCell{Day: dd, Date: day.String(), Held: held[day], Today: day == today}
		if col++; col == 7 {
			g.Weeks = append(g.Weeks, week)
			week, col = [7]dayCell{}, 0
		}
	}
	if col > 0 {
		g.Weeks = append(g.Weeks, week)
	}
	return g
}

// excludedBy lists the occurrences from now to until of the tasks that
// name calendar ci as their exclude_calendar (directly or through its
// holidays), which it keeps from running.
// It reads at most excludedScan occurrences, and reports whether there
// were more excluded ones than it lists.
func (u *UI) excludedBy(v *scheduler.View, ci scheduler.CalendarInfo, now, until time.Time) ([]excludedFire, bool) {
	scheds := map[string]calendar.Schedule{}
	for _, task := range ci.UsedBy {
		if s := v.Schedule(task); s != nil {
			scheds[task] = s
		}
	}
	if len(scheds) == 0 {
		return nil, false
	}
	planned, more := calendar.Forecast(scheds, now, until, excludedScan)
	var out []excludedFire
	for _, p := range planned {
		if p.Excluded == ci.Calendar.Name {
			if len(out) == excludedMax {
				return out, true
			}
			out = append(out, excludedFire{Task: p.Task, At: u.local(p.At)})
		}
	}
	return out, more
}
