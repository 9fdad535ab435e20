package defs

import (
	"fmt"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/calendar/ics"
)

// ICSFiles returns the paths the ics_file lines of a definition text
// name, in order, each once: the files a client sends with the text (see
// ResolveICS).
func ICSFiles(file, src string) []string {
	var out []string
	for _, f := range icsFields(file, src) {
		if f.Value != "" && !contains(out, f.Value) {
			out = append(out, f.Value)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// icsField is an ics_file line and the calendar action it belongs to.
type icsField struct {
	Field
	act *Action
}

// icsFields returns the ics_file lines of the calendar actions of a text.
func icsFields(file, src string) []icsField {
	if !strings.Contains(src, "ics_file") {
		return nil
	}
	acts, err := Read(file, src, Language)
	if err != nil {
		return nil // the text is refused as it is, later
	}
	var out []icsField
	for i := range acts {
		if !acts[i].Kind.IsCalendar() {
			continue
		}
		for _, f := range acts[i].Fields {
			if f.Key == "ics_file" {
				out = append(out, icsField{f, &acts[i]})
			}
		}
	}
	return out
}

// ResolveICS replaces each ics_file line of a calendar action by a dates
// line holding the dates of the iCalendar file it names (see package
// calendar/ics), which read returns given the path as the line writes it.
// Recurring events are expanded over ics.Horizon(now). Every line keeps
// its number, so that later errors still point into the text; an error
// reading or parsing a file names the definition file, the line and the
// calendar. A text without ics_file lines is returned as it is.
//
// The stored calendar holds the dates, not the path: it does not depend on
// the file after it is defined, and gnomon export writes its dates.
func ResolveICS(file, src string, read func(path string) ([]byte, error), now time.Time) (string, error) {
	text, _, err := ResolveICSWarnings(file, src, read, now)
	return text, err
}

// ResolveICSWarnings is ResolveICS, and also returns what the files were
// read as other than they write it (an empty RRULE read as no
// recurrence), each naming the definition file, the line, the calendar
// and the file: "cal.def:3: insert_calendar fr: ics_file: fr.ics: VEVENT
// 2 (...): RRULE is empty: read as no recurrence".
func ResolveICSWarnings(file, src string, read func(path string) ([]byte, error), now time.Time) (string, []string, error) {
	fields := icsFields(file, src)
	if len(fields) == 0 {
		return src, nil, nil
	}
	var warnings []string
	from, to := ics.Horizon(now)
	lines := strings.Split(src, "\n")
	var errs Errors
	for _, f := range fields {
		fail := func(format string, args ...any) {
			errs = append(errs, &Error{File: file, Line: f.Line, Kind: f.act.Kind, Target: f.act.Name, Msg: "ics_file: " + fmt.Sprintf(format, args...)})
		}
		if f.Value == "" {
			fail("the path of an iCalendar (.ics) file is required")
			continue
		}
		b, err := read(f.Value)
		if err != nil {
			fail("%s: %v", f.Value, err)
			continue
		}
		res, err := ics.Read(b, from, to)
		if err != nil {
			fail("%s: %v", f.Value, err)
			continue
		}
		for _, w := range res.Warnings {
			warnings = append(warnings, fmt.Sprintf("%s:%d: %s %s: ics_file: %s: %s", file, f.Line, f.act.Kind, f.act.Name, f.Value, w))
		}
		ds := res.Dates
		texts := make([]string, len(ds))
		for i, d := range ds {
			texts[i] = d.String()
		}
		cr := ""
		if strings.HasSuffix(lines[f.Line-1], "\r") {
			cr = "\r"
		}
		lines[f.Line-1] = "dates: " + strings.Join(texts, ", ") + cr
	}
	if len(errs) > 0 {
		return "", warnings, errs
	}
	return strings.Join(lines, "\n"), warnings, nil
}
