package eventdep

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gnomon-sched/gnomon/job"
)

func TestDecodeEvent(t *testing.T) {
	t.Parallel()
	at := time.Date(2021, 1, 1, 12, 30, 0, 0, time.UTC)
	good := map[string]Event{
		`{"eventType":"TIME_BASED_CRON","eventTimestamp":"2021-01-01 12:30:00","eventResourceId":"cron"}`:        {job.TimeBased, "cron", at},
		`{"eventType":"TIME_BASED","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceld":"cron"}`:            {job.TimeBased, "cron", at},
		`{"eventType":"TABLE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"T","x":[1,{}]}`:         {job.Table, "T", at},
		" \n{\"eventType\":\"FILE\",\"eventTimestamp\":\"2021-01-01T12:30:00Z\",\"eventResourceId\":\"/a b\"}\n": {job.File, "/a b", at},
	}
	for in, want := range good {
		got, err := DecodeEvent([]byte(in))
		if err != nil || got != want {
			t.Errorf("%s: got %+v, %v; want %+v", in, got, err, want)
		}
	}
	syntax := []string{"", "  ", `{"eventType":`, `{"eventType":"FILE"} {}`, `{"eventType":"FILE"}x`, `{'a':1}`, `[1,]`}
	for _, in := range syntax {
		_, err := DecodeEvent([]byte(in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: got %v, want a syntax error", in, err)
		}
	}
	invalid := map[string]string{
		`[]`:   "must be a JSON object, not an array",
		`"x"`:  "must be a JSON object, not a string",
		`null`: "must be a JSON object, not null",
		`12`:   "must be a JSON object, not a number",
		`{"eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"c"}`:                          "eventType: required",
		`{"eventType":null,"eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"c"}`:         "eventType: required",
		`{"eventType":"FILE","eventResourceId":"c"}`:                                               "eventTimestamp: required",
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z"}`:                             "eventResourceId: required",
		`{"eventType":"file","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"c"}`:       `eventType: "file" is not one of`,
		`{"eventType":"TIME BASED","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"c"}`: `is not one of`,
		`{"eventType":1,"eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"c"}`:            "eventType: expected a string, got a number",
		`{"eventType":"FILE","eventTimestamp":1609504200,"eventResourceId":"c"}`:                   "eventTimestamp: expected a string, got a number",
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":["c"]}`:     "eventResourceId: expected a string, got an array",
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":""}`:        "eventResourceId: must not be empty",
		`{"eventType":"FILE","eventTimestamp":"2021-02-30T12:30:00Z","eventResourceId":"c"}`:       "eventTimestamp:",
		`{"EventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"c"}`:       "eventType: required",
		// What encoding/json would read without a word.
		"{\"eventType\":\"FILE\",\"eventTimestamp\":\"2021-01-01T12:30:00Z\",\"eventResourceId\":\"/in/\xff.csv\"}":              "eventResourceId: not UTF-8: byte 0xff at offset 83 of the body",
		"{\"eventType\":\"FILE\xc3\",\"eventTimestamp\":\"2021-01-01T12:30:00Z\",\"eventResourceId\":\"c\"}":                     "eventType: not UTF-8: byte 0xc3 at offset 18",
		"{\"note\":[\"\xe2\x82\"],\"eventType\":\"FILE\",\"eventTimestamp\":\"2021-01-01T12:30:00Z\",\"eventResourceId\":\"c\"}": "note: not UTF-8: byte 0xe2",
		"{\"n\xffte\":1,\"eventType\":\"FILE\",\"eventTimestamp\":\"2021-01-01T12:30:00Z\",\"eventResourceId\":\"c\"}":           "a member name is not UTF-8: byte 0xff at offset 3",
		"\"\xff\"": "not UTF-8: byte 0xff at offset 1",
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"/in/a\u0000.csv"}`:      `eventResourceId: holds a NUL character (\u0000)`,
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceld":"\u0000"}`:               `eventResourceId: holds a NUL character`,
		`{"eventType":"FILE\u0000","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"c"}`:              `eventType: holds a NUL character`,
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z\u0000","eventResourceId":"c"}`:              `eventTimestamp: holds a NUL character`,
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"/in/\ud800.csv"}`:       `eventResourceId: holds \ud800, half of a surrogate pair without its other half`,
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"/in/\udc00\ud800.csv"}`: `eventResourceId: holds \udc00`,
	}
	for in, want := range invalid {
		_, err := DecodeEvent([]byte(in))
		var ie *InvalidError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an invalid-event error containing %q", in, err, want)
		}
	}
	// Control characters other than NUL are kept in a resource id (a file
	// name may hold them), and so are non-ASCII letters and escaped pairs.
	kept := map[string]string{
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"/in/\u001b[31mred\tx\u007f"}`:  "/in/\x1b[31mred\tx\x7f",
		`{"eventType":"FILE","eventTimestamp":"2021-01-01T12:30:00Z","eventResourceId":"/in/été/\u202e/\ud83d\ude00"}`: "/in/été/\u202e/😀",
	}
	for in, want := range kept {
		ev, err := DecodeEvent([]byte(in))
		if err != nil || ev.Resource != want {
			t.Errorf("%s: got %q, %v; want %q", in, ev.Resource, err, want)
		}
	}
	// The member that holds the first invalid byte is named, whichever.
	var ie *InvalidError
	if _, err := DecodeEvent([]byte("{\"eventType\":\"FILE\",\"x\":\"\xff\",\"eventResourceId\":\"\xfe\"}")); !errors.As(err, &ie) || ie.Field != "x" {
		t.Errorf("got %v, want the error of member x", err)
	}
}

// FuzzDecodeEvent checks that any body gets exactly one of: an event that
// is valid, a syntax error, an invalid-event error.
func FuzzDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"eventType":"FILE","eventTimestamp":"2021-01-01 11:59:59","eventResourceId":"/a/b"}`))
	f.Add([]byte(`{"eventType":"TIME_BASED_CRON","eventTimestamp":"2021-01-01T12:30:00.5+01:00","eventResourceld":"cron"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"eventType":`))
	f.Add([]byte("{\"eventType\":\"FILE\",\"eventTimestamp\":\"2021-01-01 11:59:59\",\"eventResourceId\":\"/a/\xff\"}"))
	f.Add([]byte(`{"eventType":"FILE","eventTimestamp":"2021-01-01 11:59:59","eventResourceId":"/a/\u0000\ud800\u001b"}`))
	f.Add([]byte(`{"eventType":"FILE","eventTimestamp":"2021-01-01 11:59:59","eventResourceId":"\\ud800\ud83d\ude00"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := DecodeEvent(body)
		var (
			se *SyntaxError
			ie *InvalidError
		)
		switch {
		case err == nil:
			if _, ok := job.ParseDataType(string(ev.Type)); !ok || ev.Resource == "" || ev.At.Location() != time.UTC {
				t.Fatalf("accepted an invalid event %+v", ev)
			}
		case errors.As(err, &se), errors.As(err, &ie):
		default:
			t.Fatalf("unexpected error type %T: %v", err, err)
		}
		// The scanner agrees with encoding/json.
		want, werr := referenceDecode(body)
		if (err == nil) != (werr == nil) || ev != want || (err != nil && errors.As(err, &se) != errors.As(werr, &se)) {
			t.Fatalf("%q: got %+v, %v; encoding/json reads %+v, %v", body, ev, err, want, werr)
		}
	})
}

// referenceDecode is DecodeEvent written with encoding/json alone.
func referenceDecode(body []byte) (Event, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return Event{}, &InvalidError{Msg: "not an object"}
		}
		return Event{}, &SyntaxError{Msg: err.Error()}
	}
	if !utf8.Valid(body) {
		return Event{}, &InvalidError{Msg: "not UTF-8"}
	}
	if obj == nil {
		return Event{}, &InvalidError{Msg: "null"}
	}
	if _, ok := obj["eventResourceId"]; !ok {
		if v, ok := obj["eventResourceld"]; ok {
			obj["eventResourceId"] = v
		}
	}
	var vals [3]string
	for i, f := range []string{"eventType", "eventTimestamp", "eventResourceId"} {
		if err := json.Unmarshal(obj[f], &vals[i]); err != nil || len(obj[f]) == 0 || obj[f][0] != '"' {
			return Event{}, &InvalidError{Field: f}
		}
		// A NUL, or a U+FFFD the decoder made of half a surrogate pair.
		made := strings.Count(vals[i], "\ufffd") - strings.Count(string(obj[f]), "\ufffd") - strings.Count(strings.ToLower(string(obj[f])), `\ufffd`)
		if strings.Contains(vals[i], "\x00") || made > 0 {
			return Event{}, &InvalidError{Field: f}
		}
	}
	typ, ok := job.ParseDataType(vals[0])
	at, err := ParseTimestamp(vals[1])
	if !ok || vals[2] == "" || err != nil {
		return Event{}, &InvalidError{}
	}
	return Event{Type: typ, Resource: vals[2], At: at}, nil
}
