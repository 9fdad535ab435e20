package web

import (
	"encoding/json"
	"html/template"
	"net/url"
	"strconv"
	"time"

	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

func (u *UI) funcs() template.FuncMap {
	return template.FuncMap{
		"asset": func(name string) string { return u.assets[name] },
		// params shows a run's parameter values as the definition writes
		// them; declaredParams is the JSON of the parameters a task
		// declares, with their defaults, for the start dialog ("" for none).
		"params": defs.FormatVars,
		"declaredParams": func(t job.Task) string {
			ps := t.Extras().Env().Params
			if len(ps) == 0 {
				return ""
			}
			b, _ := json.Marshal(ps)
			return string(b)
		},
		// ts shows an instant in the server's zone; the zero time as a dash.
		"ts": func(t time.Time) string {
			if t.IsZero() {
				return "–"
			}
			return t.In(u.cfg.Location).Format("2006-01-02 15:04:05")
		},
		// instants shows the instants a text of the engine's holds (a
		// reason why, the fate of an occurrence) as ts does.
		"instants": func(text string) string {
			return engine.FormatInstants(text, func(t time.Time) string { return t.In(u.cfg.Location).Format("2006-01-02 15:04:05") })
		},
		// zone names the server's zone, in which the header's clock
		// ticks.
		"zone": func() string { return u.cfg.Location.String() },
		// zoneOffset is the zone's offset from UTC at an instant, in
		// seconds: the clock ticks by it where the browser does not know
		// the zone by name (the machine's own zone is "Local").
		"zoneOffset": func(t time.Time) int {
			_, off := t.In(u.cfg.Location).Zone()
			return off
		},
		// iso is an instant for a <time datetime> attribute.
		"iso": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.Format(time.RFC3339)
		},
		"dur": func(a, b time.Time) string {
			if a.IsZero() || b.IsZero() {
				return ""
			}
			return b.Sub(a).Round(time.Millisecond).String()
		},
		"status": func(s job.Status) string { return statusClass(s) },
		"path":   url.PathEscape,
		"query":  url.QueryEscape,
		// coord is an SVG coordinate, to a tenth.
		"coord":         func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
		"plus":          func(a, b int) int { return a + b },
		"minus":         func(a, b int) int { return a - b },
		"list":          func(s ...string) []string { return s },
		"sectionURL":    func(s string) string { return sections[s].url },
		"sectionName":   func(s string) string { return sections[s].name },
		"pageURL":       pageURL,
		"shortDuration": shortDuration,
		"rfc3339":       func(t time.Time) string { return t.Format(time.RFC3339) },
		"tlRuns":        func() int { return tlRuns },
		"tlPlans":       func() int { return tlPlans },
		"tlRows":        func() int { return tlRows },
	}
}

// sections are the entries of the navigation.
var sections = map[string]struct{ name, url string }{
	"overview":  {"Overview", "/"},
	"tasks":     {"Tasks", "/tasks"},
	"runs":      {"Runs", "/runs"},
	"timeline":  {"Timeline", "/timeline"},
	"graph":     {"Graph", "/graph"},
	"data":      {"Data events", "/data"},
	"trees":     {"Trees", "/trees"},
	"calendars": {"Calendars", "/calendars"},
	"alerts":    {"Alerts", "/alerts"},
	"audit":     {"Audit", "/audit"},
	"tokens":    {"Tokens", "/tokens"},
	"cluster":   {"Cluster", "/cluster"},
}

// pageURL is the task list with a filter, from after a name.
func pageURL(f taskFilter, after string) string {
	return "/tasks?" + params("q", f.Q, "status", f.Status, "type", f.Type, "group", f.Group, "label", f.Label, "bundle", f.Bundle, "after", after).Encode()
}
