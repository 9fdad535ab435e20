package eventdep

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

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

func (e *InvalidError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// DecodeEvent reads a request body holding one event in the seed's shape.
// It returns a *SyntaxError when the body is not exactly one JSON value and
// an *InvalidError when the value is not a valid event. Field names are
// matched exactly; unknown fields are ignored. eventResourceld (with a
// lower-case L) is how the seed's own scenario spells the resource field
// once: it is read when eventResourceId is absent.
func DecodeEvent(body []byte) (Event, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		var (
			se *json.SyntaxError
			te *json.UnmarshalTypeError
		)
		switch {
		case isSpace(body):
			return Event{}, &SyntaxError{Msg: "empty body: expected one JSON object"}
		case errors.As(err, &se):
			return Event{}, &SyntaxError{Msg: fmt.Sprintf("invalid JSON at byte %d: %v", se.Offset, se)}
		case errors.As(err, &te):
			return Event{}, &InvalidError{Msg: fmt.Sprintf("the event must be a JSON object, not %s", te.Value)}
		}
		return Event{}, &SyntaxError{Msg: "invalid JSON: " + err.Error()}
	}
	if obj == nil {
		return Event{}, &InvalidError{Msg: "the event must be a JSON object, not null"}
	}
	if _, ok := obj["eventResourceId"]; !ok {
		if v, ok := obj["eventResourceld"]; ok {
			obj["eventResourceId"] = v
		}
	}
	var vals [3]string
	for i, f := range [3]string{"eventType", "eventTimestamp", "eventResourceId"} {
		raw, ok := obj[f]
		if !ok || string(raw) == "null" {
			return Event{}, &InvalidError{Field: f, Msg: "required"}
		}
		if raw[0] != '"' {
			return Event{}, &InvalidError{Field: f, Msg: "expected a string, got " + kindOf(raw)}
		}
		if err := json.Unmarshal(raw, &vals[i]); err != nil {
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

func isSpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
