// Package storetest is the conformance suite every store.Store must pass.
package storetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Open returns a fresh, empty store; reopen returns a new handle on the same
// data (after the first was closed).
type Open func(t *testing.T) (s store.Store, reopen func() store.Store)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// Run runs the conformance suite, area by area.
func Run(t *testing.T, open Open) {
	t.Run("basics", func(t *testing.T) { testBasics(t, open) })
	t.Run("history", func(t *testing.T) { testHistory(t, open) })
	t.Run("journal", func(t *testing.T) { testJournal(t, open) })
	t.Run("notices", func(t *testing.T) { testNotices(t, open) })
	t.Run("trees", func(t *testing.T) { testTrees(t, open) })
	t.Run("tokens", func(t *testing.T) { testTokens(t, open) })
	t.Run("retention", func(t *testing.T) { t.Parallel(); RunRetention(t, open) })
}

// InAnyOrder compares the windows of two snapshots, which a store returns
// in no particular order.
var InAnyOrder = cmpopts.SortSlices(func(a, b job.Validation) bool {
	if a.Task != b.Task {
		return a.Task < b.Task
	}
	if a.Dep != b.Dep {
		return a.Dep < b.Dep
	}
	return a.TS.Before(b.TS)
})
