package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
)

func TestCheckpointPart(t *testing.T) {
	t.Parallel()
	at := func(ns int64) time.Time { return time.Unix(0, ns).UTC() }
	rows := []job.Validation{{Task: "a", Dep: "TABLE:t", TS: at(1)}, {Task: "a", Dep: "TABLE:t", TS: at(-2)},
		{Task: "a", Dep: `FILE:/é "q"`, TS: at(3)}, {Task: "b", Dep: "TABLE:t", TS: at(4)}}
	got := string(AppendCheckpointPart(nil, rows))
	want := `[{"task":"a","dep":"TABLE:t","ts":[1,-2]},{"task":"a","dep":"FILE:/é \"q\"","ts":[3]},{"task":"b","dep":"TABLE:t","ts":[4]}]`
	if got != want {
		t.Errorf("AppendCheckpointPart:\n got %s\nwant %s", got, want)
	}
	if got := string(AppendCheckpointPart(nil, nil)); got != "[]" {
		t.Errorf("AppendCheckpointPart of no rows: %s", got)
	}
	back, err := DecodeCheckpointPart(nil, []byte("[]"))
	if err != nil || len(back) != 0 {
		t.Errorf("decoding []: %v, %v", back, err)
	}
	back, err = DecodeCheckpointPart(nil, []byte(want))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rows, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if _, err := DecodeCheckpointPart(nil, []byte(`{"task":`)); err == nil {
		t.Error("a broken part decoded")
	}
}

func TestTaskDecoder(t *testing.T) {
	t.Parallel()
	const n = 3*decodeChunkSize + 7
	encode := func(i int) (def, state []byte) {
		task := &job.Task{Name: fmt.Sprintf("t%04d", i), Type: job.Callable, Command: "true"}
		def, err := EncodeDef(task)
		if err != nil {
			t.Fatal(err)
		}
		st := job.State{Status: job.Success, RunID: int64(i)}
		if state, err = EncodeState(&st); err != nil {
			t.Fatal(err)
		}
		return def, state
	}
	t.Run("in order", func(t *testing.T) {
		t.Parallel()
		d := NewTaskDecoder(n)
		for i := range n {
			if err := d.Add(encode(i)); err != nil {
				t.Fatal(err)
			}
		}
		recs, err := d.Wait()
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			if r.Def.Name != fmt.Sprintf("t%04d", i) || r.Def.Command != "true" || r.State.RunID != int64(i) || r.State.Status != job.Success {
				t.Fatalf("task %d decoded as %+v %+v", i, *r.Def, r.State)
			}
		}
	})
	t.Run("first error by position", func(t *testing.T) {
		t.Parallel()
		// Errors in the last chunk and in the second: the second's is
		// reported, however the workers are scheduled.
		for range 20 {
			d := NewTaskDecoder(n)
			for i := range n {
				def, state := encode(i)
				switch i {
				case decodeChunkSize + 3:
					state = []byte(`{"status":`)
				case n - 1:
					def = []byte(`nonsense`)
				}
				d.Add(def, state)
			}
			_, err := d.Wait()
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("task t%04d: state", decodeChunkSize+3)) {
				t.Fatalf("error %v, want the state of t%04d", err, decodeChunkSize+3)
			}
		}
	})
	t.Run("counts", func(t *testing.T) {
		t.Parallel()
		d := NewTaskDecoder(1)
		d.Add(encode(0))
		if err := d.Add(encode(1)); err == nil {
			t.Error("a task beyond the count was accepted")
		}
		d.Wait()
		d = NewTaskDecoder(2)
		d.Add(encode(0))
		if _, err := d.Wait(); err == nil {
			t.Error("fewer tasks than counted decoded without an error")
		}
	})
}

// A log span column reads back as written, and anything else is refused
// with an error, never a panic.
func FuzzDecodeLogSpan(f *testing.F) {
	for _, s := range []string{"", "0,10,0,0", "-1,120,7,7", "1,2,3", "a,b,c,d", "-2,0,0,0", "9223372036854775807,0,0,0",
		"0,10,0,0,w1", "0,10,0,0,", "0,10,0,0,w1,w2", "0,10,0,0,,12,13", "0,10,0,0,w1,12,0", "0,10,0,0,,x,1", "0,10,0,0,,-1,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		span, err := DecodeLogSpan(s)
		if err != nil {
			return
		}
		back, err := DecodeLogSpan(EncodeLogSpan(span))
		if err != nil || (back == nil) != (span == nil) || (span != nil && *back != *span) {
			t.Fatalf("%q read back as %+v, %v; want %+v", s, back, err, span)
		}
	})
}

// A span a cluster's worker measured names the worker, and reads back
// with it; a span of this server's own names no one, as before.
func TestLogSpanNode(t *testing.T) {
	span := &job.LogSpan{OutFrom: 3, OutTo: 10, ErrFrom: -1, ErrTo: 0, Node: "w1"}
	if got := EncodeLogSpan(span); got != "3,10,-1,0,w1" {
		t.Fatalf("encoded %q", got)
	}
	back, err := DecodeLogSpan("3,10,-1,0,w1")
	if err != nil || *back != *span {
		t.Fatalf("decoded %+v, %v; want %+v", back, err, span)
	}
	if back, err := DecodeLogSpan("3,10,-1,0"); err != nil || back.Node != "" {
		t.Fatalf("a span without a node decoded %+v, %v", back, err)
	}
	for _, bad := range []string{"3,10,-1,0,", "3,10,-1,0,w1,w2"} {
		if _, err := DecodeLogSpan(bad); err == nil {
			t.Errorf("%q decoded", bad)
		}
	}
}

// A parameters column reads back as written, and anything else is
// refused with an error, never a panic.
func FuzzDecodeParams(f *testing.F) {
	for _, s := range []string{"", `[{"name":"a","value":"1"}]`, `[{"name":"a","value":"x, \"y\""},{"name":"b","value":""}]`, `[`, `{}`, `[1]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps, err := DecodeParams(s)
		if err != nil {
			return
		}
		back, err := DecodeParams(EncodeParams(ps))
		if err != nil || len(back) != len(ps) {
			t.Fatalf("%q read back as %+v, %v; want %+v", s, back, err, ps)
		}
		for i := range ps {
			if back[i] != ps[i] {
				t.Fatalf("%q read back as %+v; want %+v", s, back, ps)
			}
		}
	})
}

// A span names the files its ranges are in, which reads back, with or
// without a node.
func TestLogSpanFiles(t *testing.T) {
	for _, span := range []*job.LogSpan{{OutFrom: 3, OutTo: 10, OutFile: 77, ErrFile: 78}, {OutFrom: 3, OutTo: 10, Node: "w1", ErrFile: 9}} {
		back, err := DecodeLogSpan(EncodeLogSpan(span))
		if err != nil || *back != *span {
			t.Errorf("%+v read back as %+v, %v", span, back, err)
		}
	}
	if got := EncodeLogSpan(&job.LogSpan{OutFrom: 3, OutTo: 10, OutFile: 77, ErrFile: 78}); got != "3,10,0,0,,77,78" {
		t.Errorf("encoded %q", got)
	}
	if _, err := DecodeLogSpan("3,10,0,0,,77"); err == nil {
		t.Error("a span with one file decoded")
	}
}
