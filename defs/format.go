package defs

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

// Attrs returns a task's set attributes as (key, value) pairs in the
// language's canonical order (the order schd_task shows them in), as Format
// writes them. A task always has its priority; a group or a resource has
// none.
func Attrs(t *job.Task) [][2]string {
	on := kindOf(t.Type)
	if on&(onGroup|onResource) == 0 {
		// A task of any type, known or not.
		on = onTask
	}
	var out [][2]string
	for i := range attrTable {
		a := &attrTable[i]
		if a.on&on == 0 || a.formatFunc == nil {
			continue
		}
		if v := a.formatFunc(t); v != "" {
			out = append(out, [2]string{a.name, v})
		}
	}
	return out
}

// JoinClocks renders times as HH:MM, comma-joined.
func JoinClocks(cs []job.Clock) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, ",")
}

// JoinMins renders minutes as two digits, comma-joined.
func JoinMins(ms []int) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = fmt.Sprintf("%02d", m)
	}
	return strings.Join(s, ",")
}

// Format writes tasks as insert_task actions (groups as insert_group),
// bundles first, groups last and otherwise by name, so that the output
// applied to an empty store recreates them.
func Format(w io.Writer, tasks []*job.Task) error {
	sorted := slices.Clone(tasks)
	rank := func(t *job.Task) int {
		switch t.Type {
		case job.Resource:
			return -1
		case job.Bundle:
			return 0
		case job.Group:
			return 2
		}
		return 1
	}
	slices.SortFunc(sorted, func(a, b *job.Task) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	var b strings.Builder
	for i, t := range sorted {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s\n", kindFor(Insert, t.Type), t.Name)
		for _, kv := range Attrs(t) {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// kindFor returns the action of base (Insert, Update or Delete) that
// applies to a definition of type typ: the group's or the resource's for
// those.
func kindFor(base Kind, typ job.Type) Kind {
	group := map[Kind]Kind{Insert: InsertGroup, Update: UpdateGroup, Delete: DeleteGroup}
	resource := map[Kind]Kind{Insert: InsertResource, Update: UpdateResource, Delete: DeleteResource}
	switch typ {
	case job.Group:
		return group[base]
	case job.Resource:
		return resource[base]
	}
	return base
}

// Define returns the action that defines t as it is, with each of its
// attributes (what Format writes of it, without the text): a definition
// built in a program comes in as a file does, checked by the same rules,
// and a value holds what the program gave it, line breaks and all (which
// the checks then refuse, naming the attribute).
func Define(t *job.Task) Action {
	a := Action{Kind: kindFor(Insert, t.Type), Name: t.Name}
	for _, kv := range Attrs(t) {
		a.Fields = append(a.Fields, Field{Key: kv[0], Value: kv[1]})
	}
	return a
}

// FormatCalendars writes named calendars as insert_calendar actions, by
// name, so that the output applied to an empty store recreates them. An
// export writes them before the tasks that name them.
func FormatCalendars(w io.Writer, cals []*job.Calendar) error {
	sorted := slices.Clone(cals)
	slices.SortFunc(sorted, func(a, b *job.Calendar) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	for i, c := range sorted {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s\n", InsertCalendar, c.Name)
		for _, kv := range CalendarAttrs(c) {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// DepsJSON renders dependencies as the "dependencies" attribute holds them:
// a one-line JSON array in the seed's shape. A resource id may hold
// characters a definition may not (see Apply): they are written as JSON
// escapes (\u001b, \u0085, \u202e), which read back as the same id, so
// that the line holds printable text only.
func DepsJSON(deps []job.DataDep) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(deps)
	s := strings.TrimSuffix(b.String(), "\n")
	if !strings.ContainsFunc(s, termsafe.Unsafe) {
		return s
	}
	// encoding/json escapes C0 but not DEL, C1 or the bidirectional
	// characters; outside strings, JSON text is ASCII without them.
	var e strings.Builder
	for _, r := range s {
		if termsafe.Unsafe(r) {
			fmt.Fprintf(&e, `\u%04x`, r)
		} else {
			e.WriteRune(r)
		}
	}
	return e.String()
}
