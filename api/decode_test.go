package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// decode refuses a body that is not UTF-8, which encoding/json would read
// with U+FFFD in place of the bytes, and reads one that is.
func TestDecodeRefusesInvalidUTF8(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, body string
		want       string // the error, "" for none
	}{
		{"UTF-8", `{"file":"a.def","text":"label: café"}`, ""},
		{"in a string", "{\"file\":\"a.def\",\"text\":\"label: caf\xe9\"}", "request body is not valid UTF-8"},
		{"in a name", "{\"file\":\"a\xff.def\",\"text\":\"\"}", "request body is not valid UTF-8"},
		{"a lone continuation byte", "{\"file\":\"a.def\",\"text\":\"\x80\"}", "request body is not valid UTF-8"},
		{"a surrogate encoded in UTF-8", "{\"file\":\"a.def\",\"text\":\"\xed\xa0\x80\"}", "request body is not valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/api/v1/definitions", strings.NewReader(tc.body))
			r.Header.Set("Content-Type", "application/json")
			var req DefineRequest
			err := decode(httptest.NewRecorder(), r, &req)
			if tc.want == "" {
				if err != nil || req.Text != "label: café" {
					t.Fatalf("decode = %v, text %q", err, req.Text)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != http.StatusBadRequest || e.Message != tc.want {
				t.Fatalf("decode = %#v; want 400 %q", err, tc.want)
			}
		})
	}
}
