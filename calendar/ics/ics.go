// Package ics reads an iCalendar (.ics) file, such as a published list of
// public holidays, into the dates of a named calendar. It parses with
// github.com/emersion/go-ical and expands recurrences with
// github.com/teambition/rrule-go, which go-ical uses.
//
// Each VEVENT gives the days it covers: an all-day event its DTSTART up
// to its DTEND (or DURATION) excluded, one day without either; a timed
// event the dates from its start to its end, an end at midnight excluded.
// Dates are read as the file writes them (a time with a TZID is on its
// own date); a time in UTC is taken on its date in the zone the file's
// X-WR-TIMEZONE names, UTC without one, but an EXDATE, RDATE or
// RECURRENCE-ID in UTC on its date in the zone of the event it names
// (its DTSTART's TZID), where the occurrence it names falls. Cancelled
// events are left out.
//
// A recurring event (RRULE, with RDATE and EXDATE; a VEVENT with a
// RECURRENCE-ID replaces the occurrence it names, with RANGE=THISANDFUTURE
// that occurrence and every later one, shifted as it is) is expanded over a
// bounded horizon (see Horizon), since a named calendar holds dates: an
// open-ended recurrence is cut at its end, and a calendar that should
// reach further is defined again later. Recurrences more frequent than
// daily are refused. FREQ=YEARLY with BYMONTHDAY and no BYMONTH (nor
// BYYEARDAY, BYWEEKNO) is read in DTSTART's month, once a year.
package ics

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	ical "github.com/emersion/go-ical"
	"github.com/teambition/rrule-go"

	"github.com/gnomon-sched/gnomon/calendar"
)

// Bounds on a file, so that reading one stays cheap whatever it holds.
const (
	// MaxRecurring is the most recurring events a file may hold: a
	// recurrence whose parts never meet is searched to the year 9999,
	// which takes up to a tenth of a second.
	MaxRecurring = 200
	// MaxDays is the most days one event may cover.
	MaxDays = 366
	// MaxDates is the most dates a file may give.
	MaxDates = 100_000
	// maxDepth bounds how deeply components nest (a VALARM in a VEVENT
	// in a VCALENDAR is three).
	maxDepth = 8
)

// maxDate is the last date a calendar may hold.
var maxDate = calendar.MakeDate(9999, time.December, 31)

// Horizon returns the dates recurring events are expanded over for a
// calendar defined at instant now (in UTC): from 1 January of the year
// before to 31 December ten years after. Ten years covers the life of a
// holiday list; the year before keeps what the recent past held, for
// explanations of past occurrences.
func Horizon(now time.Time) (from, to calendar.Date) {
	y := now.UTC().Year()
	return calendar.MakeDate(y-1, time.January, 1), calendar.MakeDate(y+10, time.December, 31)
}

// Dates returns the days the events of an iCalendar file cover, sorted
// and without repeats: those of one-off events wherever they fall, those
// of recurring events from from to to (see Horizon).
func Dates(src []byte, from, to calendar.Date) ([]calendar.Date, error) {
	res, err := Read(src, from, to)
	return res.Dates, err
}

// Result is what Read finds in a file.
type Result struct {
	// Dates are the days its events cover, as Dates returns them.
	Dates []calendar.Date
	// Warnings say what was read other than the file writes it, such as
	// an empty RRULE read as no recurrence, each naming its VEVENT.
	Warnings []string
}

// Read returns the days the events of an iCalendar file cover, as Dates
// does, and what it read other than the file writes it.
func Read(src []byte, from, to calendar.Date) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = Result{}, fmt.Errorf("not an iCalendar file the parser can read: %v", r)
		}
	}()
	if err := checkNesting(src); err != nil {
		return Result{}, err
	}
	r := reader{from: from, to: to, days: map[calendar.Date]bool{}}
	dec := ical.NewDecoder(bytes.NewReader(src))
	n := 0
	for {
		cal, err := dec.Decode()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, fmt.Errorf("not an iCalendar file: %v", strings.TrimPrefix(err.Error(), "ical: "))
		}
		n++
		if err := r.calendar(cal); err != nil {
			return Result{}, err
		}
	}
	if n == 0 {
		return Result{}, errors.New("not an iCalendar file: no BEGIN:VCALENDAR")
	}
	if r.events == 0 {
		return Result{}, errors.New("the file holds no VEVENT")
	}
	out := make([]calendar.Date, 0, len(r.days))
	for d := range r.days {
		out = append(out, d)
	}
	slices.Sort(out)
	return Result{Dates: out, Warnings: r.warnings}, nil
}

// checkNesting refuses components nested deeper than maxDepth before the
// parser, which descends into each, reads them.
func checkNesting(src []byte) error {
	depth := 0
	for line := range bytes.Lines(src) {
		switch l := bytes.ToUpper(bytes.TrimSpace(line)); {
		case bytes.HasPrefix(l, []byte("BEGIN:")):
			if depth++; depth > maxDepth {
				return fmt.Errorf("components nested more than %d deep", maxDepth)
			}
		case bytes.HasPrefix(l, []byte("END:")):
			depth--
		}
	}
	return nil
}

type reader struct {
	from, to calendar.Date
	days     map[calendar.Date]bool
	// zone is where times in UTC are dated: the calendar's X-WR-TIMEZONE.
	zone      *time.Location
	events    int
	recurring int
	warnings  []string
}

// event is what one VEVENT says, read.
type event struct {
	index  int
	name   string // for errors: its SUMMARY or UID
	start  time.Time
	allDay bool
	length time.Duration // from start to end; 0 covers the start's day
	// zone is the event's own: that of DTSTART's TZID, else the file's.
	// An EXDATE in UTC is dated there.
	zone *time.Location
	// rules are its RRULEs: RFC 2445 allowed several, whose occurrences
	// add up, and some programs still write them.
	rules   []*rrule.ROption
	exdates map[calendar.Date]bool
	rdates  []time.Time
	uid     string
	// recurrenceID, when set, is the occurrence of the event with this
	// UID that this one replaces; ridProp is how the file writes it,
	// read again in the zone of the event it names.
	recurrenceID time.Time
	ridProp      *ical.Prop
	// future is set by RANGE=THISANDFUTURE: this event replaces the
	// occurrence it names and every later one, shifted as it is.
	future    bool
	cancelled bool
	// sequence is its SEQUENCE: of the VEVENTs with one UID and
	// RECURRENCE-ID, those with the highest are read.
	sequence int
}

func (r *reader) calendar(cal *ical.Calendar) error {
	r.zone = time.UTC
	if p := cal.Props.Get("X-WR-TIMEZONE"); p != nil {
		if loc, err := time.LoadLocation(strings.TrimSpace(p.Value)); err == nil {
			r.zone = loc
		}
	}
	var evs []*event
	for i, c := range cal.Children {
		if c.Name != ical.CompEvent {
			continue
		}
		r.events++
		ev, err := r.event(i+1, c)
		if err != nil {
			return err
		}
		evs = append(evs, ev)
	}
	evs = newest(evs)
	// A RECURRENCE-ID in UTC is dated in the zone of the event it names.
	zones := map[string]*time.Location{}
	for _, ev := range evs {
		if ev.ridProp == nil {
			zones[ev.uid] = ev.zone
		}
	}
	for _, ev := range evs {
		if ev.ridProp != nil && zones[ev.uid] != nil {
			ev.recurrenceID, _, _ = r.value(ev.ridProp, zones[ev.uid])
		}
	}
	evs, err := r.current(evs)
	if err != nil {
		return err
	}
	// Occurrences that another VEVENT replaces, by UID; the events that
	// replace an occurrence and those after it, by UID, in order.
	replaced := map[string]map[calendar.Date]bool{}
	future := map[string][]*event{}
	for _, ev := range evs {
		if ev.future && zones[ev.uid] != nil {
			future[ev.uid] = append(future[ev.uid], ev)
			continue
		}
		if !ev.recurrenceID.IsZero() {
			if replaced[ev.uid] == nil {
				replaced[ev.uid] = map[calendar.Date]bool{}
			}
			replaced[ev.uid][dateOf(ev.recurrenceID)] = true
		}
	}
	for _, list := range future {
		slices.SortStableFunc(list, func(a, b *event) int { return a.recurrenceID.Compare(b.recurrenceID) })
	}
	for _, ev := range evs {
		if ev.cancelled || ev.future && zones[ev.uid] != nil {
			continue // a range is covered through the event it names
		}
		if err := r.add(ev, replaced[ev.uid], future[ev.uid]); err != nil {
			return err
		}
	}
	return nil
}

// current leaves out the VEVENTs that replace an occurrence their
// recurring event no longer has, when the recurring event is the newer
// (a higher SEQUENCE): it was changed after them, and its EXDATE, UNTIL,
// COUNT or rule now says that occurrence does not happen. An older
// recurring event does not overrule them.
func (r *reader) current(evs []*event) ([]*event, error) {
	series := map[string]*event{}
	for _, ev := range evs {
		if ev.ridProp == nil && ev.uid != "" && (len(ev.rules) > 0 || len(ev.rdates) > 0) {
			series[ev.uid] = ev
		}
	}
	has := map[*event]map[calendar.Date]bool{}
	out := evs[:0]
	for _, ev := range evs {
		s := series[ev.uid]
		if ev.ridProp == nil || s == nil || ev.sequence >= s.sequence || dateOf(ev.recurrenceID) > r.to {
			out = append(out, ev)
			continue
		}
		if has[s] == nil {
			times, err := r.occurrences(s)
			if err != nil {
				return nil, err
			}
			has[s] = map[calendar.Date]bool{}
			for _, t := range times {
				if d := dateOf(t); !s.exdates[d] {
					has[s][d] = true
				}
			}
		}
		if has[s][dateOf(ev.recurrenceID)] {
			out = append(out, ev)
		}
	}
	return out, nil
}

// newest keeps, of the events that share a UID and a RECURRENCE-ID (or
// have none), those of the highest SEQUENCE: earlier versions of an event
// left in the file. Events without a UID are all kept.
func newest(evs []*event) []*event {
	key := func(ev *event) string {
		if ev.ridProp == nil {
			return ev.uid
		}
		return fmt.Sprintf("%s\x00%s\x00%s\x00%t", ev.uid, ev.ridProp.Params.Get(ical.ParamTimezoneID), strings.ToUpper(strings.TrimSpace(ev.ridProp.Value)), ev.future)
	}
	top := map[string]int{}
	for _, ev := range evs {
		if k := key(ev); ev.uid != "" {
			if s, ok := top[k]; !ok || ev.sequence > s {
				top[k] = ev.sequence
			}
		}
	}
	out := evs[:0]
	for _, ev := range evs {
		if ev.uid == "" || ev.sequence == top[key(ev)] {
			out = append(out, ev)
		}
	}
	return out
}

// String names the event for errors: its place in the file, and its
// SUMMARY or UID.
func (ev *event) String() string {
	if ev.name == "" {
		return fmt.Sprintf("VEVENT %d", ev.index)
	}
	return fmt.Sprintf("VEVENT %d (%s)", ev.index, ev.name)
}

// event reads one VEVENT.
func (r *reader) event(index int, c *ical.Component) (*event, error) {
	ev := &event{index: index}
	if s, err := c.Props.Text(ical.PropSummary); err == nil && s != "" {
		ev.name = fmt.Sprintf("%q", s)
	}
	if p := c.Props.Get(ical.PropUID); p != nil {
		ev.uid = p.Value
		if ev.name == "" {
			ev.name = fmt.Sprintf("UID %q", p.Value)
		}
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", ev, fmt.Sprintf(format, args...))
	}
	if p := c.Props.Get(ical.PropSequence); p != nil {
		ev.sequence, _ = strconv.Atoi(strings.TrimSpace(p.Value)) // 0 when unreadable
	}
	if p := c.Props.Get(ical.PropStatus); p != nil && strings.EqualFold(strings.TrimSpace(p.Value), "CANCELLED") {
		ev.cancelled = true
	}
	p := c.Props.Get(ical.PropDateTimeStart)
	if p == nil {
		return nil, bad("no DTSTART")
	}
	var err error
	if ev.start, ev.allDay, err = r.value(p, r.zone); err != nil {
		return nil, bad("DTSTART: %v", err)
	}
	ev.zone = r.zone
	if id := p.Params.Get(ical.ParamTimezoneID); id != "" {
		if loc, err := time.LoadLocation(strings.TrimSpace(id)); err == nil {
			ev.zone = loc
		}
	}
	switch end, dur := c.Props.Get(ical.PropDateTimeEnd), c.Props.Get(ical.PropDuration); {
	case end != nil:
		e, _, err := r.value(end, r.zone)
		if err != nil {
			return nil, bad("DTEND: %v", err)
		}
		ev.length = e.Sub(ev.start)
	case dur != nil:
		d, err := dur.Duration()
		if err != nil {
			return nil, bad("DURATION: %v", strings.TrimPrefix(err.Error(), "ical: "))
		}
		ev.length = d
	case ev.allDay:
		ev.length = 24 * time.Hour
	}
	if ev.length < 0 {
		// Some programs write an event's ends the wrong way round.
		r.warnings = append(r.warnings, fmt.Sprintf("%s: it ends before it starts: read as from its end to its start", ev))
		ev.start, ev.length = ev.start.Add(ev.length), -ev.length
	}
	if ev.length > MaxDays*24*time.Hour {
		return nil, bad("it lasts more than %d days", MaxDays)
	}
	if p := c.Props.Get(ical.PropRecurrenceID); p != nil {
		if ev.recurrenceID, _, err = r.value(p, ev.zone); err != nil {
			return nil, bad("RECURRENCE-ID: %v", err)
		}
		ev.ridProp = p
		ev.future = strings.EqualFold(strings.TrimSpace(p.Params.Get(ical.ParamRange)), "THISANDFUTURE")
	}
	for _, p := range c.Props.Values(ical.PropRecurrenceRule) {
		if strings.TrimSpace(p.Value) == "" {
			// Published holiday lists write it for events that do not recur.
			r.warnings = append(r.warnings, fmt.Sprintf("%s: RRULE is empty: read as no recurrence", ev))
			continue
		}
		rule, err := rrule.StrToROption(p.Value)
		if err != nil {
			return nil, bad("RRULE: %v", err)
		}
		if rule.Freq > rrule.DAILY {
			return nil, bad("RRULE: FREQ=%s is more frequent than daily, which a calendar of days cannot hold", rule.Freq)
		}
		if untilUTC.MatchString(p.Value) {
			// An UNTIL in UTC is an instant: the last occurrence is the
			// one at or before it on the event's clock.
			w := rule.Until.In(ev.zone)
			rule.Until = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, time.UTC)
		}
		ev.rules = append(ev.rules, rule)
	}
	for _, p := range c.Props.Values(ical.PropExceptionDates) {
		for _, v := range strings.Split(p.Value, ",") {
			t, _, err := r.value(&ical.Prop{Name: p.Name, Params: p.Params, Value: v}, ev.zone)
			if err != nil {
				return nil, bad("EXDATE: %v", err)
			}
			if ev.exdates == nil {
				ev.exdates = map[calendar.Date]bool{}
			}
			ev.exdates[dateOf(t)] = true
		}
	}
	for _, p := range c.Props.Values(ical.PropRecurrenceDates) {
		for _, v := range strings.Split(p.Value, ",") {
			v, _, _ = strings.Cut(v, "/") // a PERIOD: its start
			t, _, err := r.value(&ical.Prop{Name: p.Name, Params: p.Params, Value: v}, ev.zone)
			if err != nil {
				return nil, bad("RDATE: %v", err)
			}
			ev.rdates = append(ev.rdates, t)
		}
	}
	return ev, nil
}

// value reads a DATE or DATE-TIME value as its wall clock reading, in a
// time.Time in UTC (the zone plays no part in a date): a time in UTC is
// read on the clock of zone (the file's for a DTSTART, the event's for
// the EXDATE, RDATE and RECURRENCE-ID that name its occurrences). It
// reports whether the value is a date.
func (r *reader) value(p *ical.Prop, zone *time.Location) (time.Time, bool, error) {
	v := strings.TrimSpace(p.Value)
	switch {
	case len(v) == 8 && !strings.EqualFold(p.Params.Get("VALUE"), "DATE-TIME"):
		t, err := time.Parse("20060102", v)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("%q is not a date such as 20261225", v)
		}
		return t, true, checkYear(t)
	case len(v) == 16 && (v[15] == 'Z' || v[15] == 'z'):
		t, err := time.Parse("20060102T150405", v[:15])
		if err != nil {
			return time.Time{}, false, fmt.Errorf("%q is not a date and time such as 20261225T090000Z", v)
		}
		w := t.In(zone)
		t = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, time.UTC)
		return t, false, checkYear(t)
	case len(v) == 15:
		t, err := time.Parse("20060102T150405", v)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("%q is not a date and time such as 20261225T090000", v)
		}
		return t, false, checkYear(t)
	}
	return time.Time{}, false, fmt.Errorf("%q is not a date (20261225) or a date and time (20261225T090000, with Z for UTC)", v)
}

// untilUTC finds an UNTIL in UTC in an RRULE.
var untilUTC = regexp.MustCompile(`(?i)(^|;)UNTIL=\d{8}T\d{6}Z(;|$)`)

func checkYear(t time.Time) error {
	if t.Year() < 1900 || t.Year() > 9999 {
		return fmt.Errorf("%s is out of range: years from 1900 to 9999", t.Format(time.DateOnly))
	}
	return nil
}

// dateOf returns the date of a wall clock reading.
func dateOf(t time.Time) calendar.Date { return calendar.MakeDate(t.Date()) }

// add adds the days an event covers: its own, or those of its occurrences
// in the horizon but those replaced. An occurrence at or after the
// RECURRENCE-ID of an event of future (RANGE=THISANDFUTURE, in order) is
// that event's: shifted as it is from the occurrence it names, with its
// length, or left out if it is cancelled.
func (r *reader) add(ev *event, replaced map[calendar.Date]bool, future []*event) error {
	if len(ev.rules) == 0 && len(ev.rdates) == 0 || ev.ridProp != nil {
		// A VEVENT that replaces an occurrence is that occurrence alone,
		// whatever RRULE it repeats.
		return r.cover(ev, ev.start)
	}
	if r.recurring++; r.recurring > MaxRecurring {
		return fmt.Errorf("more than %d recurring events: split the file", MaxRecurring)
	}
	occurs := func(t time.Time) error {
		d := dateOf(t)
		if ev.exdates[d] || replaced[d] || d < r.from || d > r.to {
			return nil
		}
		by := ev
		for _, f := range future {
			if t.Before(f.recurrenceID) {
				break
			}
			by = f
		}
		if by != ev {
			if by.cancelled {
				return nil
			}
			t = t.Add(by.start.Sub(by.recurrenceID))
		}
		return r.cover(by, t)
	}
	times, err := r.occurrences(ev)
	if err != nil {
		return err
	}
	for _, t := range times {
		if err := occurs(t); err != nil {
			return err
		}
	}
	return nil
}

// occurrences returns the starts of a recurring event's occurrences up to
// the end of the horizon, in order: those of its RRULEs (its DTSTART when
// it has none) and its RDATEs.
func (r *reader) occurrences(ev *event) ([]time.Time, error) {
	var out []time.Time
	if len(ev.rules) == 0 {
		out = append(out, ev.start)
	}
	for _, rule := range ev.rules {
		opt := *rule
		opt.Dtstart = ev.start
		if opt.Freq == rrule.YEARLY && len(opt.Bymonthday) > 0 && len(opt.Bymonth) == 0 &&
			len(opt.Byyearday) == 0 && len(opt.Byweekno) == 0 {
			// RFC 5545 would take every month; the calendar programs
			// that export it for a yearly event on a month's last day
			// mean DTSTART's month, once a year.
			opt.Bymonth = []int{int(ev.start.Month())}
		}
		if len(opt.Byweekno) > 0 && len(opt.Byweekday) == 0 && len(opt.Bymonthday) == 0 && len(opt.Byyearday) == 0 {
			// The day of the week comes from DTSTART, as what a rule
			// leaves out does (RFC 5545, 3.3.10), not every day of
			// the week.
			opt.Byweekday = []rrule.Weekday{weekdays[ev.start.Weekday()]}
		}
		end := r.to.Start(time.UTC).Add(24 * time.Hour)
		if opt.Until.IsZero() || opt.Until.After(end) {
			opt.Until = end
		}
		times, err := expand(opt)
		if err != nil {
			return nil, fmt.Errorf("%s: RRULE: %v", ev, err)
		}
		out = append(out, times...)
	}
	out = append(out, ev.rdates...)
	slices.SortFunc(out, time.Time.Compare)
	return slices.CompactFunc(out, time.Time.Equal), nil
}

// weekdays are rrule's days of the week, by time.Weekday.
var weekdays = [7]rrule.Weekday{rrule.SU, rrule.MO, rrule.TU, rrule.WE, rrule.TH, rrule.FR, rrule.SA}

// expand returns the occurrences of a rule, in order. A BYDAY that mixes
// days with an ordinal (3MO) and days without (WE) selects the days of
// either kind, but rrule-go yields nothing for it: such a rule is expanded
// as two, one with each kind, merged, and its COUNT applied to the merge.
func expand(opt rrule.ROption) ([]time.Time, error) {
	var ordinal, plain []rrule.Weekday
	for _, d := range opt.Byweekday {
		if d.N() != 0 {
			ordinal = append(ordinal, d)
		} else {
			plain = append(plain, d)
		}
	}
	if len(ordinal) == 0 || len(plain) == 0 {
		rule, err := rrule.NewRRule(opt)
		if err != nil {
			return nil, err
		}
		return rule.All(), nil
	}
	count, setpos := opt.Count, opt.Bysetpos
	opt.Count = 0
	period := func(t time.Time) int { return t.Year()*100 + int(t.Month()) }
	switch {
	case len(setpos) == 0:
	case opt.Freq == rrule.MONTHLY:
		opt.Bysetpos = nil
	case opt.Freq == rrule.YEARLY:
		opt.Bysetpos = nil
		period = func(t time.Time) int { return t.Year() }
	default:
		setpos = nil // each kind picks its own
	}
	until := opt.Until
	if len(setpos) > 0 && !until.IsZero() {
		// The period UNTIL falls in is picked from whole, then cut.
		opt.Until = until.AddDate(1, 0, 0)
	}
	var out []time.Time
	for _, days := range [][]rrule.Weekday{ordinal, plain} {
		o := opt
		o.Byweekday = days
		rule, err := rrule.NewRRule(o)
		if err != nil {
			return nil, err
		}
		out = append(out, rule.All()...)
	}
	slices.SortFunc(out, time.Time.Compare)
	out = slices.CompactFunc(out, time.Time.Equal)
	if len(setpos) > 0 {
		// BYSETPOS picks among the days of both kinds, in each month
		// (MONTHLY) or year (YEARLY).
		var picked []time.Time
		for i := 0; i < len(out); {
			j := i
			for j < len(out) && period(out[j]) == period(out[i]) {
				j++
			}
			group := out[i:j]
			for _, p := range setpos {
				switch {
				case p > 0 && p <= len(group):
					picked = append(picked, group[p-1])
				case p < 0 && -p <= len(group):
					picked = append(picked, group[len(group)+p])
				}
			}
			i = j
		}
		slices.SortFunc(picked, time.Time.Compare)
		out = slices.CompactFunc(picked, time.Time.Equal)
		if !until.IsZero() {
			out = slices.DeleteFunc(out, func(t time.Time) bool { return t.After(until) })
		}
	}
	if count > 0 && len(out) > count {
		out = out[:count]
	}
	return out, nil
}

// cover adds the days of one occurrence starting at wall time start.
func (r *reader) cover(ev *event, start time.Time) error {
	first := dateOf(start)
	last := first
	if ev.length > 0 {
		last = dateOf(start.Add(ev.length - time.Nanosecond))
	}
	for d := first; d <= min(last, maxDate); d++ {
		r.days[d] = true
	}
	if len(r.days) > MaxDates {
		return fmt.Errorf("more than %d dates: split the file", MaxDates)
	}
	return nil
}
