package eventdep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/gnomon-sched/gnomon/internal/jsonenc"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

// Event is one data event: a resource of a type seen at an instant.
type Event struct {
	Type     job.DataType
	Resource string
	At       time.Time // UTC
}

// A SyntaxError is a body that is not exactly one JSON value.
type SyntaxError struct{ Msg string }

func (e *SyntaxError) Error() string { return e.Msg }

// An InvalidError is valid JSON that is not a valid event; Field names the
// offending field, empty when the value is not an object.
type InvalidError struct {
	Field string
	Msg   string
}

// Error formats the error as "field: message"; a control character in a
// member's name is written as an escape (see termsafe.String).
func (e *InvalidError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return termsafe.String(e.Field) + ": " + e.Msg
}

// DecodeEvent reads a request body holding one event in the seed's shape.
// It returns a *SyntaxError when the body is not exactly one JSON value and
// an *InvalidError when the value is not a valid event. Field names are
// matched exactly; unknown fields are ignored. eventResourceld (with a
// lower-case L) is how the seed's own scenario spells the resource field
// once: it is read when eventResourceId is absent.
//
// A body that is not UTF-8 is an *InvalidError naming the member that
// holds the first invalid byte, whichever it is (encoding/json would read
// the byte as U+FFFD without a word); so is a field that holds a NUL
// (\u0000) or half of an escaped surrogate pair (\ud800). A resource id
// may hold any other character, control characters included: a file name
// may.
func DecodeEvent(body []byte) (Event, error) {
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		var se *json.SyntaxError
		switch {
		case isSpace(body):
			return Event{}, &SyntaxError{Msg: "empty body: expected one JSON object"}
		case errors.As(err, &se):
			return Event{}, &SyntaxError{Msg: fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)}
		case err != nil:
			return Event{}, &SyntaxError{Msg: "invalid JSON: " + err.Error()}
		}
		return Event{}, &SyntaxError{Msg: "invalid JSON"}
	}
	if !utf8.Valid(body) {
		return Event{}, notUTF8(body)
	}
	raw, err := members(body, fields[:])
	if err != nil {
		return Event{}, err
	}
	if raw[2] == nil {
		raw[2] = raw[3] // eventResourceld
	}
	var vals [3]string
	for i, f := range fields[:3] {
		v := raw[i]
		if v == nil || string(v) == "null" {
			return Event{}, &InvalidError{Field: f, Msg: "required"}
		}
		if v[0] != '"' {
			return Event{}, &InvalidError{Field: f, Msg: "expected a string, got " + kindOf(v)}
		}
		if vals[i], err = unquote(v); err != nil {
			return Event{}, &InvalidError{Field: f, Msg: err.Error()}
		}
	}
	typ, ok := job.ParseDataType(vals[0])
	if !ok {
		return Event{}, &InvalidError{Field: "eventType", Msg: fmt.Sprintf("%q is not one of FILE, TABLE, TIME_BASED, TIME_BASED_CRON", vals[0])}
	}
	if vals[2] == "" {
		return Event{}, &InvalidError{Field: "eventResourceId", Msg: "must not be empty"}
	}
	at, err := ParseTimestamp(vals[1])
	if err != nil {
		return Event{}, &InvalidError{Field: "eventTimestamp", Msg: err.Error()}
	}
	return Event{Type: typ, Resource: vals[2], At: at}, nil
}

// fields are the members DecodeEvent reads, by exact name.
var fields = [4]string{"eventType", "eventTimestamp", "eventResourceId", "eventResourceld"}

// members returns the raw values of the named members of the JSON object
// in body, which must be valid JSON; a member given twice keeps its last
// value, as encoding/json does. Other members are skipped.
func members(body []byte, names []string) ([4][]byte, error) {
	var out [4][]byte
	i := skipSpace(body, 0)
	if body[i] != '{' {
		return out, &InvalidError{Msg: "the event must be a JSON object, not " + kindOf(body[i:])}
	}
	i = skipSpace(body, i+1)
	for body[i] != '}' {
		end := skipValue(body, i)
		key := body[i:end]
		i = skipSpace(body, end)
		i = skipSpace(body, i+1) // ':'
		vend := skipValue(body, i)
		name := string(key[1 : len(key)-1])
		if bytesContain(key, '\\') {
			name, _ = unquote(key)
		}
		for k, n := range names {
			if n == name {
				out[k] = body[i:vend]
			}
		}
		i = skipSpace(body, vend)
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	return out, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the valid JSON value that starts at i.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		for i++; ; i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipValue(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

func bytesContain(b []byte, c byte) bool { return bytes.IndexByte(b, c) >= 0 }

// notUTF8 is the error of a body, valid JSON otherwise, that is not
// UTF-8: it names the member of the top-level object that holds the first
// invalid byte.
func notUTF8(body []byte) error {
	bad := 0
	for bad < len(body) {
		r, n := utf8.DecodeRune(body[bad:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		bad += n
	}
	msg := fmt.Sprintf("not UTF-8: byte 0x%02x at offset %d of the body", body[bad], bad)
	i := skipSpace(body, 0)
	if body[i] != '{' {
		return &InvalidError{Msg: msg}
	}
	for i = skipSpace(body, i+1); body[i] != '}'; {
		kend := skipValue(body, i)
		if bad < kend {
			return &InvalidError{Msg: "a member name is " + msg}
		}
		key, _ := unquote(body[i:kend])
		i = skipSpace(body, skipSpace(body, kend)+1) // past ':'
		vend := skipValue(body, i)
		if bad < vend {
			return &InvalidError{Field: key, Msg: msg}
		}
		if i = skipSpace(body, vend); body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	return &InvalidError{Msg: msg}
}

// unquote decodes a JSON string token of a body that is UTF-8. A token
// with escapes that hides a NUL or half a surrogate pair is an error (see
// jsonenc.CheckString); one without escapes can hide neither.
func unquote(tok []byte) (string, error) {
	if !bytesContain(tok, '\\') {
		return string(tok[1 : len(tok)-1]), nil
	}
	if msg := jsonenc.CheckString(tok); msg != "" {
		return "", errors.New(msg)
	}
	var s string
	err := json.Unmarshal(tok, &s)
	return s, err
}

func isSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
