// Package defs reads and checks task definition files.
//
// A file is a sequence of actions (insert_task, update_task, delete_task,
// insert_group, update_group, delete_group for job groups, and
// insert_calendar, update_calendar, delete_calendar for named calendars), each
// followed by "key: value" attribute lines, or configurations in the
// JSON shape of seed 000 (see ParseJSON). Parse turns the text into
// actions; Apply validates them against the current definitions, all or
// nothing, and returns the definitions that result. Format writes definitions
// back in the same language.
package defs

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/internal/suggest"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

// Kind is an action keyword.
type Kind string

// Action keywords.
const (
	Insert Kind = "insert_task"
	Update Kind = "update_task"
	Delete Kind = "delete_task"
	// Job groups (seed 004).
	InsertGroup Kind = "insert_group"
	UpdateGroup Kind = "update_group"
	DeleteGroup Kind = "delete_group"
	// Named calendars.
	InsertCalendar Kind = "insert_calendar"
	UpdateCalendar Kind = "update_calendar"
	DeleteCalendar Kind = "delete_calendar"
	// Resources shared between tasks.
	InsertResource Kind = "insert_resource"
	UpdateResource Kind = "update_resource"
	DeleteResource Kind = "delete_resource"
)

// IsResource reports whether the action is on a resource.
func (k Kind) IsResource() bool {
	return k == InsertResource || k == UpdateResource || k == DeleteResource
}

// IsGroup reports whether the action is on a job group.
func (k Kind) IsGroup() bool { return k == InsertGroup || k == UpdateGroup || k == DeleteGroup }

// IsCalendar reports whether the action is on a named calendar.
func (k Kind) IsCalendar() bool {
	return k == InsertCalendar || k == UpdateCalendar || k == DeleteCalendar
}

// base returns the task action the kind corresponds to.
func (k Kind) base() Kind {
	switch k {
	case InsertGroup, InsertCalendar, InsertResource:
		return Insert
	case UpdateGroup, UpdateCalendar, UpdateResource:
		return Update
	case DeleteGroup, DeleteCalendar, DeleteResource:
		return Delete
	}
	return k
}

// Field is one "key: value" line.
type Field struct {
	Key, Value string
	Line       int
}

// Action is one action with its attribute lines.
type Action struct {
	Kind   Kind
	Name   string
	Line   int
	Fields []Field
	// Syntax holds the grammar errors Parse found in the action's lines
	// (and, for the first action, before it). Apply reports them together
	// with the errors of meaning, in line order, so that one error does not
	// hide another.
	Syntax Errors
	// Meant are the attributes the invalid fields of the action are
	// closest to ("comand": command): no rule reports one of them
	// missing, which the invalid field already tells.
	Meant []string
}

// Error is a problem in a definition file. It names the file, the line, and
// where known the action and its target.
type Error struct {
	File   string
	Line   int
	Kind   Kind
	Target string
	Msg    string
}

// Error formats the error as "file:line: kind target: message". A
// control character in the file name, the target or the message (which
// may quote the file) is written as an escape (see termsafe.String), so
// that the error prints on one line and shows what the file holds.
func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	var s string
	switch {
	case e.Kind != "" && e.Target != "":
		s = fmt.Sprintf("%s: %s %s: %s", loc, e.Kind, e.Target, e.Msg)
	case e.Kind != "":
		s = fmt.Sprintf("%s: %s: %s", loc, e.Kind, e.Msg)
	default:
		s = fmt.Sprintf("%s: %s", loc, e.Msg)
	}
	return termsafe.String(s)
}

// Errors is a list of definition errors, in line order.
type Errors []*Error

func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// SyntaxErrors returns the grammar errors the actions carry (see
// Action.Syntax), or nil. Apply reports them itself; a caller that only
// parses asks here.
func SyntaxErrors(acts []Action) error {
	var errs Errors
	for _, a := range acts {
		errs = append(errs, a.Syntax...)
	}
	if len(errs) == 0 {
		return nil
	}
	slices.SortStableFunc(errs, func(x, y *Error) int { return x.Line - y.Line })
	return limit(errs)
}

// limit keeps the first MaxErrors of errors sorted by line, and says how
// many more there are in a last error, at the line of the first left out.
func limit(errs Errors) Errors {
	if len(errs) <= MaxErrors {
		return errs
	}
	more := errs[MaxErrors]
	return append(errs[:MaxErrors:MaxErrors], &Error{File: more.File, Line: more.Line,
		Msg: fmt.Sprintf("too many errors: %d more from this line on are not shown", len(errs)-MaxErrors)})
}

// Bounds on a definition file. A file beyond MaxFileSize or MaxActions is
// refused as a whole, before any action is checked: split it. The largest
// file a benchmark applies in one request holds 40,000 tasks, and 10,000
// configurations in the JSON shape; a file of real tasks (a few lines
// each) reaches MaxFileSize long before MaxActions, which bounds the cheap
// actions (deletes, short inserts) that many bytes can hold. (A
// configuration in the JSON shape takes 80 bytes at least: such a file
// reaches MaxFileSize first.)
//
// Past MaxErrors errors, a file's errors end with one saying how many
// more there are; the grammar is not read further.
const (
	MaxFileSize = 4 << 20
	MaxActions  = 100_000
	MaxErrors   = 1000
)

// Parse splits a definition file into actions. It checks the grammar only;
// Apply checks the meaning.
//
// A grammar error does not end the parse: it is kept in the Syntax of the
// action it occurs in, and Apply reports it together with every error of
// meaning, each once, on its own line and naming its action. Parse recovers
// the way a compiler does: an action or attribute line without its colon
// ("insert_task b4", "type callable") is taken as what it was meant to be,
// and the lines after an unknown action keyword are skipped. Parse itself
// fails only when the file holds no action, or is too large (see
// MaxFileSize and MaxActions), or is not UTF-8 text, or holds more than
// MaxErrors grammar errors, or is JSON that does not parse; use
// SyntaxErrors to see the grammar errors without applying.
//
// A file that is not UTF-8 is refused at the line of its first invalid
// byte, whatever its shape: encoding/json would read such a byte as
// U+FFFD without a word. The values and names themselves are checked by
// Apply (see its doc).
//
// Parse reads the file in the syntax its shape tells (SyntaxOf); Read
// reads it in a declared one.
func Parse(file, src string) ([]Action, error) { return Read(file, src, Told) }

// Read is Parse in the syntax syn: the task language or configuration
// JSON (Told: the one the file's shape tells).
func Read(file, src string, syn Syntax) ([]Action, error) {
	if len(src) > MaxFileSize {
		return nil, Errors{{File: file, Msg: fmt.Sprintf("file larger than %d bytes", MaxFileSize)}}
	}
	if !utf8.ValidString(src) {
		return nil, Errors{notUTF8(file, src)}
	}
	if syn.Of(src) != Language {
		return parseJSON(file, src)
	}
	var (
		acts []Action
		// cur is the index of the action the lines belong to; -1 before the
		// first action and after an invalid action line, whose attributes
		// are not reported again (skipping).
		cur      = -1
		skipping bool
		seen     map[string]int
		// before holds the errors found before the first action.
		before Errors
		// nerrs counts the errors reported.
		nerrs int
	)
	report := func(line int, format string, args ...any) {
		nerrs++
		e := &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
		switch {
		case cur >= 0:
			e.Kind, e.Target = acts[cur].Kind, acts[cur].Name
			acts[cur].Syntax = append(acts[cur].Syntax, e)
		case len(acts) > 0:
			acts[len(acts)-1].Syntax = append(acts[len(acts)-1].Syntax, e)
		default:
			before = append(before, e)
		}
	}
	start := func(k Kind, name string, line int) {
		acts = append(acts, Action{Kind: k, Name: name, Line: line})
		cur, seen, skipping = len(acts)-1, map[string]int{}, false
	}
	for i, raw := range strings.Split(src, "\n") {
		line := i + 1
		if len(acts) > MaxActions {
			return nil, tooMany(file, acts[MaxActions].Line)
		}
		if nerrs > MaxErrors {
			errs := slices.Clone(before)
			for _, a := range acts {
				errs = append(errs, a.Syntax...)
			}
			slices.SortStableFunc(errs, func(x, y *Error) int { return x.Line - y.Line })
			return nil, append(errs[:MaxErrors:MaxErrors], &Error{File: file, Line: line,
				Msg: fmt.Sprintf("too many errors: more than %d, the file is not read past this line", MaxErrors)})
		}
		text := strings.TrimSpace(strings.TrimSuffix(raw, "\r"))
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		key, value, ok := strings.Cut(text, ":")
		if !ok {
			word, rest, _ := strings.Cut(text, " ")
			rest = strings.TrimSpace(rest)
			switch k := Kind(word); {
			case k.valid():
				// An action line without its colon still starts the action,
				// so that its attributes are checked against it.
				start(k, rest, line)
				if rest == "" {
					report(line, "key value pair separated by colon is expected (write \"%s: NAME\")", k)
				} else {
					report(line, "key value pair separated by colon is expected (write \"%s: %s\")", k, rest)
				}
			case actionLike(word):
				cur, skipping = -1, true
				report(line, "invalid action %q", word)
			case isAttribute(word) && !skipping:
				// Taken as the attribute it was meant to be, so that the
				// action is not also reported as lacking it.
				report(line, "key value pair separated by colon is expected (write \"%s: %s\")", word, rest)
				if _, dup := seen[word]; cur >= 0 && !dup {
					seen[word] = line
					acts[cur].Fields = append(acts[cur].Fields, Field{Key: word, Value: rest, Line: line})
				}
			case !skipping:
				report(line, "key value pair separated by colon is expected")
			}
			continue
		}
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch k := Kind(key); {
		case k.valid():
			start(k, value, line)
			if value == "" {
				report(line, "target name is empty")
			}
		case jilActions[key] != "":
			// Checked as the action it stands for, so that one pass
			// reports the errors of its attributes too.
			start(Kind(jilActions[key]), value, line)
			report(line, "invalid action %q%s", key, jilAction(key))
		case actionLike(key):
			cur, skipping = -1, true
			report(line, "invalid action %q%s", key, jilAction(key))
		case skipping:
			// attributes of an action already reported as invalid
		case cur < 0 && isAttribute(key):
			skipping = true
			report(line, "invalid action: attribute %q before the first action", key)
		case cur < 0:
			skipping = true
			report(line, "invalid action %q", key)
		case !isAttribute(key):
			if gnomon, ok := jilFields[key]; ok {
				report(line, "invalid field %q: that is AutoSys's word; gnomon writes %s", key, gnomon)
				acts[cur].Meant = append(acts[cur].Meant, jilMeant(gnomon)...)
			} else if meant := suggest.Closest(key, attributeNames); len(meant) > 0 {
				report(line, "invalid field %q; %s", key, suggest.Phrase(meant, nil))
				acts[cur].Meant = append(acts[cur].Meant, meant...)
			} else {
				report(line, "invalid field %q", key)
			}
		default:
			if prev, dup := seen[key]; dup && !attrOf(key).repeats(acts[cur].Kind) {
				report(line, "attribute %s given more than once (first on line %d)", key, prev)
				continue
			}
			seen[key] = line
			acts[cur].Fields = append(acts[cur].Fields, Field{Key: key, Value: value, Line: line})
		}
	}
	if len(acts) > MaxActions {
		return nil, tooMany(file, acts[MaxActions].Line)
	}
	if len(acts) == 0 {
		if len(before) == 0 {
			before = Errors{{File: file, Msg: "no task actions found"}}
		}
		return nil, limit(before)
	}
	acts[0].Syntax = append(before, acts[0].Syntax...)
	return acts, nil
}

// tooMany is the error of a file with more than MaxActions actions, at the
// first action past the bound.
func tooMany(file string, line int) Errors {
	return Errors{{File: file, Line: line, Msg: fmt.Sprintf("more than %d definitions in one file: split it", MaxActions)}}
}

// notUTF8 is the error of a file that is not UTF-8, at its first invalid
// byte.
func notUTF8(file, src string) *Error {
	i := 0
	for i < len(src) {
		r, n := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	line := 1 + strings.Count(src[:i], "\n")
	col := i - strings.LastIndexByte(src[:i], '\n')
	return &Error{File: file, Line: line, Msg: fmt.Sprintf("not UTF-8 text: byte 0x%02x (column %d) is not UTF-8; save the file as UTF-8", src[i], col)}
}

// valid reports whether k is an action keyword.
func (k Kind) valid() bool {
	return k == Insert || k == Update || k == Delete || k.IsGroup() || k.IsCalendar() || k.IsResource()
}

// actionLike reports whether a key that is not a known action looks like a
// misspelt one ("update:", "insert_job:").
func actionLike(key string) bool {
	for _, p := range []string{"insert", "update", "delete"} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return strings.HasSuffix(key, "_task") || strings.HasSuffix(key, "_group") || strings.HasSuffix(key, "_resource") ||
		strings.HasSuffix(key, "_calendar") && !isAttribute(key)
}

// parseJSON turns configurations in the seed-000 JSON shape into
// insert_task actions of type configuration, one per object, at the line
// where the object starts. Applied declaratively (see Declarative), a file
// of configurations creates or replaces them.
func parseJSON(file, src string) ([]Action, error) {
	cfgs, cerrs := eventdep.ParseConfigs([]byte(src))
	if len(cerrs) > 0 {
		errs := make(Errors, len(cerrs))
		for i, e := range cerrs {
			errs[i] = &Error{File: file, Line: e.Line, Msg: e.Error()}
		}
		return nil, limit(errs)
	}
	acts := make([]Action, len(cfgs))
	for i, c := range cfgs {
		a := Action{Kind: Insert, Name: c.Name, Line: c.Line, Fields: []Field{
			{Key: "type", Value: string(job.Configuration), Line: c.Line},
			{Key: "dependencies", Value: DepsJSON(c.Deps), Line: c.Line},
		}}
		for _, kv := range c.Attrs {
			a.Fields = append(a.Fields, Field{Key: kv[0], Value: kv[1], Line: c.Line})
		}
		acts[i] = a
	}
	return acts, nil
}
