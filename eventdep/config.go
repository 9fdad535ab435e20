package eventdep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gnomon-sched/gnomon/internal/jsonenc"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

// Config is one configuration read from the seed's JSON shape.
type Config struct {
	Name string
	Deps []job.DataDep
	// Attrs are the other members, as definition-language attributes
	// ("command", "out_log_file", ...) with their values.
	Attrs [][2]string
	// Line is where the configuration's object starts in the file.
	Line int
}

// ConfigError is a problem in a configuration file: the line of the
// configuration's object, its name when known, and the field, such as
// "dependencies[1].lifeDuration".
type ConfigError struct {
	Line   int
	Config string
	Field  string
	Msg    string
}

// Error formats the error as "configuration NAME: field: message"; a
// control character in the name or the field is written as an escape (see
// termsafe.String).
func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.Config != "" {
		fmt.Fprintf(&b, "configuration %s: ", termsafe.String(e.Config))
	}
	if e.Field != "" {
		b.WriteString(termsafe.String(e.Field) + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// IsJSON reports whether a definition text is in the JSON shape: its first
// non-blank character opens an object or an array.
func IsJSON(src string) bool {
	s := strings.TrimLeft(src, " \t\r\n\ufeff")
	return s != "" && (s[0] == '{' || s[0] == '[')
}

// attrs are the members a configuration object may have besides its name
// and dependencies, all taken as definition attributes.
var attrs = []string{"command", "out_log_file", "err_log_file", "label", "machine", "priority", "profile", "owner", "overlap", "function",
	"watch_file", "watch_min_size", "watch_steady", "watch_interval"}

// ParseConfigs reads one configuration object or an array of them. It
// checks the shape of each one; names and the rest are checked where the
// definitions are applied. All problems found are returned, in file order.
//
// A file that is not UTF-8 is refused at the line of its first invalid
// byte; a string that holds a NUL (\u0000) or half of an escaped
// surrogate pair (\ud800), which encoding/json would read without a word,
// is refused naming its field.
func ParseConfigs(src []byte) ([]Config, []*ConfigError) {
	var (
		out  []Config
		errs []*ConfigError
	)
	if !utf8.Valid(src) {
		bad := 0
		for bad < len(src) {
			r, n := utf8.DecodeRune(src[bad:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			bad += n
		}
		return nil, []*ConfigError{{Line: 1 + bytes.Count(src[:bad], []byte{'\n'}),
			Msg: fmt.Sprintf("not UTF-8: byte 0x%02x (column %d) is not UTF-8; save the file as UTF-8", src[bad], bad-bytes.LastIndexByte(src[:bad], '\n'))}}
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	// lineAt counts lines incrementally: offsets only grow, except for a
	// syntax error's, which ends the parse.
	var lastOff, lastLine = int64(0), 1
	lineAt := func(off int64) int {
		for off < int64(len(src)) && strings.IndexByte(" \t\r\n,", src[off]) >= 0 {
			off++
		}
		if off < lastOff {
			return 1 + bytes.Count(src[:off], []byte{'\n'})
		}
		lastLine += bytes.Count(src[lastOff:off], []byte{'\n'})
		lastOff = off
		return lastLine
	}
	syntax := func(err error) []*ConfigError {
		var se *json.SyntaxError
		line := lineAt(dec.InputOffset())
		if errors.As(err, &se) {
			line = lineAt(se.Offset)
		} else if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return append(errs, &ConfigError{Line: line, Msg: "invalid JSON: unexpected end of the file"})
		}
		return append(errs, &ConfigError{Line: line, Msg: "invalid JSON: " + err.Error()})
	}
	one := func() bool {
		line := lineAt(dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			errs = syntax(err)
			return false
		}
		c, cerrs := parseConfig(raw)
		c.Line = line
		for _, e := range cerrs {
			e.Line = line
		}
		errs = append(errs, cerrs...)
		out = append(out, c)
		return true
	}
	s := bytes.TrimLeft(src, " \t\r\n\ufeff")
	if len(s) == 0 {
		return nil, []*ConfigError{{Line: 1, Msg: "no configurations found"}}
	}
	if s[0] == '[' {
		if _, err := dec.Token(); err != nil {
			return nil, syntax(err)
		}
		for dec.More() {
			if !one() {
				return nil, errs
			}
		}
		if _, err := dec.Token(); err != nil {
			return nil, syntax(err)
		}
	} else if !one() {
		return nil, errs
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, append(errs, &ConfigError{Line: lineAt(dec.InputOffset()), Msg: "invalid JSON: data after the configurations"})
	}
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, &ConfigError{Line: 1, Msg: "no configurations found"})
	}
	seen := map[string]int{}
	for _, c := range out {
		if first, dup := seen[c.Name]; dup && c.Name != "" {
			errs = append(errs, &ConfigError{Line: c.Line, Config: c.Name, Msg: fmt.Sprintf("defined more than once (first on line %d)", first)})
		} else {
			seen[c.Name] = c.Line
		}
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b *ConfigError) int { return a.Line - b.Line })
		return nil, errs
	}
	return out, nil
}

func parseConfig(raw json.RawMessage) (Config, []*ConfigError) {
	var c Config
	obj, err := object(raw)
	if err != nil {
		return c, []*ConfigError{{Msg: "a configuration must be a JSON object, not " + err.Error()}}
	}
	var errs []*ConfigError
	fail := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Config: c.Name, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if v, ok := obj["name"]; !ok || string(v) == "null" {
		fail("name", "required")
	} else if err := json.Unmarshal(v, &c.Name); err != nil {
		fail("name", "expected a string, got %s", kindOf(v))
	} else if c.Name == "" {
		fail("name", "must not be empty")
	} else if msg := jsonenc.CheckString(v); msg != "" {
		fail("name", "%s", msg)
	}
	if v, ok := obj["dependencies"]; !ok || string(v) == "null" {
		fail("dependencies", "required: at least one dependency")
	} else {
		deps, derrs := parseDeps(v)
		for _, e := range derrs {
			e.Config = c.Name
		}
		errs = append(errs, derrs...)
		c.Deps = deps
	}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		v := obj[k]
		switch {
		case k == "name" || k == "dependencies":
		case slices.Contains(attrs, k):
			var s string
			if (k == "priority" || k == "watch_min_size") && len(v) > 0 && v[0] >= '0' && v[0] <= '9' {
				s = string(v)
			} else if err := json.Unmarshal(v, &s); err != nil {
				fail(k, "expected a string, got %s", kindOf(v))
				continue
			} else if msg := jsonenc.CheckString(v); msg != "" {
				fail(k, "%s", msg)
				continue
			}
			c.Attrs = append(c.Attrs, [2]string{k, s})
		default:
			fail(k, "unknown field (a configuration has name, dependencies and optionally %s)", strings.Join(attrs, ", "))
		}
	}
	return c, errs
}

// ParseDeps reads a JSON array of dependencies in the seed's shape, as the
// "dependencies" attribute holds it.
func ParseDeps(src string) ([]job.DataDep, error) {
	deps, errs := parseDeps(json.RawMessage(src))
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return deps, nil
}

func parseDeps(raw json.RawMessage) ([]job.DataDep, []*ConfigError) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, []*ConfigError{{Field: "dependencies", Msg: "invalid JSON: " + err.Error()}}
		}
		return nil, []*ConfigError{{Field: "dependencies", Msg: fmt.Sprintf("expected an array, got %s", kindOf(raw))}}
	}
	if len(list) == 0 {
		return nil, []*ConfigError{{Field: "dependencies", Msg: "at least one dependency is required"}}
	}
	var (
		deps = make([]job.DataDep, 0, len(list)) // kept: no spare capacity
		errs []*ConfigError
		keys = map[string]int{}
	)
	for i, r := range list {
		field := fmt.Sprintf("dependencies[%d]", i)
		fail := func(sub, format string, args ...any) {
			f := field
			if sub != "" {
				f += "." + sub
			}
			errs = append(errs, &ConfigError{Field: f, Msg: fmt.Sprintf(format, args...)})
		}
		obj, err := object(r)
		if err != nil {
			fail("", "a dependency must be a JSON object, not %s", err)
			continue
		}
		var d job.DataDep
		ok := true
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if k != "type" && k != "resourceId" && k != "lifeDuration" {
				fail(k, "unknown field (a dependency has type, resourceId and lifeDuration)")
				ok = false
			}
		}
		var typ string
		switch v, has := obj["type"]; {
		case !has || string(v) == "null":
			fail("type", "required (FILE, TABLE, TIME_BASED or TIME_BASED_CRON)")
			ok = false
		case json.Unmarshal(v, &typ) != nil:
			fail("type", "expected a string, got %s", kindOf(v))
			ok = false
		default:
			if d.Type, has = job.ParseDataType(typ); !has {
				fail("type", "%q is not one of FILE, TABLE, TIME_BASED, TIME_BASED_CRON", typ)
				ok = false
			}
		}
		switch v, has := obj["resourceId"]; {
		case !has || string(v) == "null":
			fail("resourceId", "required")
			ok = false
		case json.Unmarshal(v, &d.Resource) != nil:
			fail("resourceId", "expected a string, got %s", kindOf(v))
			ok = false
		case d.Resource == "":
			fail("resourceId", "must not be empty")
			ok = false
		case jsonenc.CheckString(v) != "":
			fail("resourceId", "%s", jsonenc.CheckString(v))
			ok = false
		}
		if v, has := obj["lifeDuration"]; !has || string(v) == "null" {
			fail("lifeDuration", "required: whole seconds, 0 or more")
			ok = false
		} else if d.Life, err = parseLife(v); err != nil {
			fail("lifeDuration", "%v", err)
			ok = false
		}
		if !ok {
			continue
		}
		if prev, dup := keys[d.Key()]; dup {
			fail("", "repeats dependencies[%d] (%s %s)", prev, d.Type, d.Resource)
			continue
		}
		keys[d.Key()] = i
		deps = append(deps, d)
	}
	return deps, errs
}

// parseLife reads a life duration: a JSON integer or a string of ASCII
// digits, in seconds.
func parseLife(v json.RawMessage) (int64, error) {
	s := string(v)
	if len(v) > 0 && v[0] == '"' {
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, err
		}
		if s == "" {
			return 0, errors.New(`empty string: expected whole seconds such as 3600 or "3600"`)
		}
	} else if len(v) == 0 || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return 0, fmt.Errorf("expected whole seconds as a number or a string of digits, got %s", kindOf(v))
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("%s is negative: expected whole seconds, 0 or more", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a whole number of seconds", s)
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > MaxLife {
		return 0, fmt.Errorf("%s is too large (at most %d seconds)", s, MaxLife)
	}
	return n, nil
}

// object decodes a JSON object with exact member names; the error names
// the kind of a value that is not an object.
func object(raw json.RawMessage) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, errors.New(kindOf(raw))
	}
	return obj, nil
}

// kindOf names the kind of a JSON value.
func kindOf(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return "nothing"
	}
	switch s[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
