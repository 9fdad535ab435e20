package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// testJournal checks the journal and the checkpoints written behind it.
func testJournal(t *testing.T, open Open) {
	ctx := context.Background()
	t.Run("journal before", func(t *testing.T) {
		t.Parallel()
		s, _ := open(t)
		defer s.Close()
		b := &store.Batch{}
		for i := range 5 {
			kind := "data"
			if i == 2 {
				kind = "act"
			}
			b.Entries = append(b.Entries, store.Entry{At: t0, Kind: kind, Body: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
		}
		if err := s.Commit(ctx, b); err != nil {
			t.Fatal(err)
		}
		seqs := func(es []store.Entry) (out []int64) {
			for _, e := range es {
				out = append(out, e.Seq)
			}
			return out
		}
		all, err := s.JournalBefore(ctx, "data", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		want := []int64{b.Entries[4].Seq, b.Entries[3].Seq, b.Entries[1].Seq, b.Entries[0].Seq}
		if diff := cmp.Diff(want, seqs(all)); diff != "" {
			t.Errorf("data entries, newest first (-want +got):\n%s", diff)
		}
		page, _ := s.JournalBefore(ctx, "data", b.Entries[3].Seq, 1)
		if diff := cmp.Diff(want[2:3], seqs(page)); diff != "" || string(page[0].Body) != `{"i":1}` {
			t.Errorf("a page before entry 3: %+v", page)
		}
		every, err := s.JournalBefore(ctx, "", b.Entries[3].Seq, 2)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int64{b.Entries[2].Seq, b.Entries[1].Seq}, seqs(every)); diff != "" || every[0].Kind != "act" {
			t.Errorf("entries of every kind before entry 3 (-want +got):\n%s", diff)
		}
	})
	t.Run("checkpoints", func(t *testing.T) {
		t.Parallel()
		s, reopen := open(t)
		v := func(task, dep string, sec int64) job.Validation {
			return job.Validation{Task: task, Dep: dep, TS: time.Unix(sec, 5).UTC()}
		}
		load := func() *store.Snapshot {
			t.Helper()
			s.Close()
			s = reopen()
			snap, err := s.Load(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return snap
		}
		// An interrupted checkpoint is not current, and its rows go.
		if err := s.Commit(ctx, &store.Batch{Checkpoint: &store.Checkpoint{Gen: 1, Rows: []job.Validation{v("A", "TABLE:t", 1)}}}); err != nil {
			t.Fatal(err)
		}
		if snap := load(); len(snap.Windows) != 0 || snap.WindowsGen != 0 || snap.WindowsSeq != 0 {
			t.Errorf("after an interrupted checkpoint: %+v gen %d seq %d", snap.Windows, snap.WindowsGen, snap.WindowsSeq)
		}
		// A checkpoint in two parts.
		first := []job.Validation{v("B", "TABLE:t", 5), v("A", "FILE:/in", 10), v("A", "FILE:/in", -30)}
		second := []job.Validation{v("A", "TABLE:t", 0)}
		for _, c := range []*store.Checkpoint{{Gen: 1, Rows: first}, {Gen: 1, Rows: second, Done: true, Seq: 42}} {
			if err := s.Commit(ctx, &store.Batch{Checkpoint: c}); err != nil {
				t.Fatal(err)
			}
		}
		snap := load()
		want := []job.Validation{v("A", "FILE:/in", -30), v("A", "FILE:/in", 10), v("A", "TABLE:t", 0), v("B", "TABLE:t", 5)}
		if diff := cmp.Diff(want, snap.Windows, InAnyOrder); diff != "" || snap.WindowsGen != 1 || snap.WindowsSeq != 42 {
			t.Errorf("checkpoint gen %d seq %d (-want +got):\n%s", snap.WindowsGen, snap.WindowsSeq, diff)
		}
		// The next generation replaces it.
		if err := s.Commit(ctx, &store.Batch{Checkpoint: &store.Checkpoint{Gen: 2, Rows: first[:1], Done: true, Seq: 50}}); err != nil {
			t.Fatal(err)
		}
		snap = load()
		defer s.Close()
		if diff := cmp.Diff(first[:1], snap.Windows, InAnyOrder); diff != "" || snap.WindowsGen != 2 || snap.WindowsSeq != 50 {
			t.Errorf("second checkpoint gen %d seq %d (-want +got):\n%s", snap.WindowsGen, snap.WindowsSeq, diff)
		}
	})
}
