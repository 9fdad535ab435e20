package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/calendar/ics"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// TypeCalendar is the type under which Changes lists named calendars.
const TypeCalendar job.Type = "calendar"

// CalendarView is a named calendar: its definition, the tasks that name it
// and, for one calendar asked for, the days it holds in a range.
type CalendarView struct {
	job.Calendar
	// UsedBy names the tasks whose run_calendar or exclude_calendar names
	// it, sorted; HolidaysOf the calendars whose holidays name it.
	UsedBy     []string `json:"used_by"`
	HolidaysOf []string `json:"holidays_of,omitempty"`
	// From, To and Days: the days (YYYY-MM-DD) it holds from From to To,
	// both included, in GET /api/v1/calendars/{name}; Truncated when
	// more than MaxPage were left out.
	From      string   `json:"from,omitempty"`
	To        string   `json:"to,omitempty"`
	Days      []string `json:"days,omitempty"`
	Truncated bool     `json:"truncated,omitempty"`
}

// CalendarsResponse lists the named calendars, by name.
type CalendarsResponse struct {
	Calendars []CalendarView `json:"calendars"`
}

// CalendarRequest defines a named calendar (PUT /api/v1/calendars/{name}):
// the fields of the definition language's insert_calendar, as JSON. ICS
// is the text of an iCalendar (.ics) file whose events' days are added to
// Dates (recurring events expanded over the horizon docs/definitions.md
// tells): the stored calendar holds dates, not the file.
type CalendarRequest struct {
	Description string   `json:"description,omitempty"`
	Dates       []string `json:"dates,omitempty"`
	Rules       []string `json:"rules,omitempty"`
	Holidays    []string `json:"holidays,omitempty"`
	Workdays    string   `json:"workdays,omitempty"`
	ICS         string   `json:"ics,omitempty"`
}

// maxCalendarDays bounds the days one answer lists.
const maxCalendarDays = MaxPage

// calendarView shows a calendar to id: the tasks that use it are those
// of its scope.
func (s *Server) calendarView(ci scheduler.CalendarInfo, id *auth.Identity) CalendarView {
	v := CalendarView{Calendar: *ci.Calendar.Clone(), UsedBy: slices.Clone(ci.UsedBy), HolidaysOf: ci.HolidaysOf}
	if len(id.Scope) > 0 {
		view := s.sched.View()
		v.UsedBy = slices.DeleteFunc(v.UsedBy, func(n string) bool { return !id.Scope.Covers(n, view.Groups(n)) })
	}
	if v.UsedBy == nil {
		v.UsedBy = []string{}
	}
	return v
}

// calendars lists the named calendars.
func (s *Server) calendars(w http.ResponseWriter, r *http.Request) error {
	resp := CalendarsResponse{Calendars: []CalendarView{}}
	for _, ci := range s.sched.View().Calendars() {
		resp.Calendars = append(resp.Calendars, s.calendarView(ci, identity(r)))
	}
	return writeJSON(w, http.StatusOK, resp)
}

// calendar shows a named calendar and the days it holds from ?from= to
// ?to= (dates, both included): by default from today, in the server's
// zone, for a year.
func (s *Server) calendar(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	from := calendar.DateOf(s.sched.Now(), s.loc)
	var err error
	if v := r.URL.Query().Get("from"); v != "" {
		if from, err = calendar.ParseDate(v); err != nil {
			return badRequest("from: %v", err)
		}
	}
	y, m, d := from.YMD()
	to := calendar.MakeDate(y+1, m, d) - 1
	if v := r.URL.Query().Get("to"); v != "" {
		if to, err = calendar.ParseDate(v); err != nil {
			return badRequest("to: %v", err)
		}
	}
	if to < from {
		return badRequest("to: %s is before from %s", to, from)
	}
	ci, found := s.sched.View().Calendar(name)
	if !found {
		return calendarNotFound(name)
	}
	v, set := s.calendarView(ci, identity(r)), ci.Days
	v.From, v.To, v.Days = from.String(), to.String(), []string{}
	if set != nil {
		days, more := set.Between(from, to, maxCalendarDays)
		for _, d := range days {
			v.Days = append(v.Days, d.String())
		}
		v.Truncated = more
	}
	return writeJSON(w, http.StatusOK, v)
}

func calendarNotFound(name string) error {
	return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("calendar %s not found", name)}
}

// putCalendar defines a named calendar from JSON: inserts it, or replaces
// the one of that name. The tasks that name it move to its new days.
func (s *Server) putCalendar(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	var req CalendarRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	text, fields, err := calendarText(name, req, s.sched.Now())
	if err != nil {
		return err
	}
	file := "calendar " + name
	if _, err := s.sched.Define(r.Context(), scheduler.DefineFile{File: file, Text: text, Mode: defs.Declared, By: auth.NameOf(r.Context())}); err != nil {
		return jsonFields(err, fields)
	}
	var v CalendarView
	if ci, ok := s.sched.View().Calendar(name); ok {
		v = s.calendarView(ci, identity(r))
	}
	return writeJSON(w, http.StatusOK, v)
}

// deleteCalendar deletes a named calendar, refused while a task or
// another calendar names it.
func (s *Server) deleteCalendar(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if _, found := s.sched.View().Calendar(name); !found {
		return calendarNotFound(name)
	}
	_, err := s.sched.Define(r.Context(), scheduler.DefineFile{File: "calendar " + name, Text: string(defs.DeleteCalendar) + ": " + name + "\n",
		By: auth.NameOf(r.Context())})
	if err != nil {
		return jsonFields(err, []string{""})
	}
	return writeJSON(w, http.StatusOK, DefineResponse{Message: "Successfully processed"})
}

// calendarText writes a CalendarRequest as an insert_calendar action, one
// line per value, and returns the JSON field each line comes from
// (fields[i] for line i+1). A value that is wrong is refused here, naming
// its field.
func calendarText(name string, req CalendarRequest, now time.Time) (string, []string, error) {
	var b strings.Builder
	fields := []string{""}
	fmt.Fprintf(&b, "%s: %s\n", defs.InsertCalendar, name)
	line := func(key, field, v string) error {
		if strings.ContainsAny(v, "\r\n") {
			return badRequest("%s: a value holds a line break", field)
		}
		fmt.Fprintf(&b, "%s: %s\n", key, v)
		fields = append(fields, field)
		return nil
	}
	if req.Description != "" {
		if err := line("description", "description", req.Description); err != nil {
			return "", nil, err
		}
	}
	for i, d := range req.Dates {
		if _, err := calendar.ParseDate(d); err != nil {
			return "", nil, badRequest("dates[%d]: %v", i, err)
		}
		if err := line("dates", fmt.Sprintf("dates[%d]", i), d); err != nil {
			return "", nil, err
		}
	}
	if req.ICS != "" {
		from, to := ics.Horizon(now)
		ds, err := ics.Dates([]byte(req.ICS), from, to)
		if err != nil {
			return "", nil, badRequest("ics: %v", err)
		}
		texts := make([]string, len(ds))
		for i, d := range ds {
			texts[i] = d.String()
		}
		if err := line("dates", "ics", strings.Join(texts, ", ")); err != nil {
			return "", nil, err
		}
	}
	for i, rule := range req.Rules {
		if _, err := calendar.ParseRule(rule); err != nil {
			return "", nil, badRequest("rules[%d]: %v", i, err)
		}
		if err := line("rule", fmt.Sprintf("rules[%d]", i), rule); err != nil {
			return "", nil, err
		}
	}
	if len(req.Holidays) > 0 {
		for i, h := range req.Holidays {
			if strings.Contains(h, ",") || strings.TrimSpace(h) == "" {
				return "", nil, badRequest("holidays[%d]: %q should be one date or one calendar's name", i, h)
			}
		}
		if err := line("holidays", "holidays", strings.Join(req.Holidays, ", ")); err != nil {
			return "", nil, err
		}
	}
	if req.Workdays != "" {
		if err := line("workdays", "workdays", req.Workdays); err != nil {
			return "", nil, err
		}
	}
	return b.String(), fields, nil
}

// jsonFields tells the definition errors of a text calendarText wrote in
// terms of its JSON fields.
func jsonFields(err error, fields []string) error {
	var errs defs.Errors
	if !errors.As(err, &errs) {
		return err
	}
	lines := make([]string, len(errs))
	for i, e := range errs {
		msg := e.Msg
		if e.Line > 0 && e.Line <= len(fields) && fields[e.Line-1] != "" {
			f := fields[e.Line-1]
			key, _, _ := strings.Cut(f, "[")
			msg = f + ": " + strings.TrimPrefix(msg, key+": ")
		}
		lines[i] = msg
	}
	return &Error{Status: http.StatusUnprocessableEntity, Message: "calendar rejected", Errors: lines}
}

// Calendars lists the named calendars.
func (c *Client) Calendars(ctx context.Context) (*CalendarsResponse, error) {
	var v CalendarsResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/calendars", nil, &v)
}

// Calendar shows a named calendar and the days it holds from from to to
// (YYYY-MM-DD, both included; empty for the server's defaults: a year from
// today).
func (c *Client) Calendar(ctx context.Context, name, from, to string) (*CalendarView, error) {
	q := url.Values{}
	if from != "" {
		q.Set("from", from)
	}
	if to != "" {
		q.Set("to", to)
	}
	path := "/api/v1/calendars/" + url.PathEscape(name)
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var v CalendarView
	return &v, c.do(ctx, http.MethodGet, path, nil, &v)
}

// PutCalendar defines a named calendar, or replaces it.
func (c *Client) PutCalendar(ctx context.Context, name string, req CalendarRequest) (*CalendarView, error) {
	var v CalendarView
	return &v, c.do(ctx, http.MethodPut, "/api/v1/calendars/"+url.PathEscape(name), req, &v)
}

// DeleteCalendar deletes a named calendar.
func (c *Client) DeleteCalendar(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/calendars/"+url.PathEscape(name), nil, nil)
}

// ExportCalendar writes one named calendar in the definition language.
func (c *Client) ExportCalendar(ctx context.Context, name string, w io.Writer) error {
	return c.do(ctx, http.MethodGet, "/api/v1/definitions?calendar="+url.QueryEscape(name), nil, w)
}
