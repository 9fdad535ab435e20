package api

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// FuzzEventsResponse checks that the hand-written answer of POST /events
// is byte for byte what json.Encoder writes.
func FuzzEventsResponse(f *testing.F) {
	f.Add("cfg", "TABLE", "db.orders", uint8(3))
	f.Add(`c"<&>`, "FILE", "/in/é\n", uint8(1))
	f.Add("", "", "", uint8(0))
	f.Fuzz(func(t *testing.T, name, typ, resource string, shape uint8) {
		res := &engine.DataResult{}
		if shape&1 != 0 {
			res.Triggered = []string{name, name + "2"}[:shape>>2%3]
		}
		if shape&2 != 0 {
			v := engine.Validated{Configuration: name, Type: job.DataType(typ), Resource: resource}
			res.Validated = []engine.Validated{v, v}[:shape>>4%3]
		}
		var want bytes.Buffer
		wire := EventsResponse{Triggered: res.Triggered}
		if res.Validated != nil {
			wire.Validated = []Validated{}
		}
		for _, v := range res.Validated {
			wire.Validated = append(wire.Validated, Validated(v))
		}
		if err := json.NewEncoder(&want).Encode(wire); err != nil {
			t.Fatal(err)
		}
		if got := appendEventsResponse(nil, res); string(got) != want.String() {
			t.Fatalf("appendEventsResponse:\n got %s\nwant %s", got, want.Bytes())
		}
	})
}
