package api

import (
	"context"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

// Scheduler is what the API asks of the scheduler it serves;
// *scheduler.Scheduler is the one gnomon serves. This seam is unstable:
// it grows and changes with the API.
//
// Most reads do not wait for the scheduler's loop: View returns the
// tasks and the named calendars as of the last commit, and the API reads
// there a task's definition, state and children, the calendars, and the
// definitions a file is planned against. The queries that need the
// loop's live structures (the reach and groups of a task or a process,
// why a task waits, its backfill runs, the timeperiod forest) are
// answered by the loop between two batches, each from one commit.
type Scheduler interface {
	// Now is the scheduler's clock; Simulated reports a simulated clock,
	// which Advance moves.
	Now() time.Time
	Simulated() bool
	Advance(ctx context.Context, to time.Time) error
	// Unavailable returns why the store cannot be written, nil if it can.
	Unavailable() error

	// Define, Submit, Post, Backfill, CancelBackfill, Trees and Prune
	// change the state and return once the change is durable.
	Define(ctx context.Context, f scheduler.DefineFile) (*scheduler.Defined, error)
	Submit(ctx context.Context, ev engine.Event) error
	Post(ctx context.Context, ev engine.Data) (*engine.DataResult, error)
	Backfill(ctx context.Context, ev engine.Backfill, dry bool) (*engine.BackfillResult, error)
	CancelBackfill(ctx context.Context, task, by string) (*engine.BackfillResult, error)
	Trees(ctx context.Context, ev periods.Event) (*periods.Output, error)
	Prune(ctx context.Context, dry bool) (store.Pruned, error)
	Retention() scheduler.Retention

	// Store reads the history; View the tasks as of the last commit.
	Store() store.Store
	View() *scheduler.View
	// LogSpan and Progress read a run in flight.
	LogSpan(run int64) (job.LogSpan, bool)
	Progress(run int64) (status string, data map[string]string, ok bool)
	// Watching says what a task's file watcher waits for.
	Watching(task string) (string, bool)

	// The queries answered by the loop.
	Reach(ctx context.Context, name string, how scheduler.Reach) (scheduler.Reachable, error)
	DataReached(ctx context.Context, typ job.DataType, resource string, groups bool) (scheduler.Reachable, error)
	Why(ctx context.Context, name string, now time.Time) (scheduler.Explanation, bool, error)
	Backfills(ctx context.Context, name string) (scheduler.BackfillState, bool, error)
	IsProcess(ctx context.Context, name string) (bool, error)
	TreeList(ctx context.Context) ([]periods.TreeInfo, error)
	Tree(ctx context.Context, name string) (periods.TreeInfo, bool, error)
	TreeFile(ctx context.Context, name string) (text []byte, files []string, err error)
	Nodes(ctx context.Context, process string, from, to periods.Key) ([]periods.Node, error)
	Outstanding(ctx context.Context) ([]periods.Node, error)
	Node(ctx context.Context, process, timeperiod string) (periods.NodeDetail, error)
	CheckTrees(ctx context.Context, ev periods.Define) (*scheduler.TreeFacts, error)
}

var _ Scheduler = (*scheduler.Scheduler)(nil)
