package scheduler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Retention is how long the scheduler keeps each kind of record before a
// pass of its pruner removes it (docs/operations.md, "Retention"). A zero
// field takes its default (DefaultRetention); job.Forever keeps every
// record of the kind. The journal is compacted behind the checkpoint of
// the windows unless Journal is job.Forever: a restart replays only the
// journal after it, so its size is bounded by the checkpoint interval and
// the data events Data keeps.
type Retention struct {
	Journal job.Duration
	// Data is how long the data events (and actions) of the journal are
	// kept: a configuration's backfill replays them.
	Data job.Duration
	// Runs, by end; Fires, by occurrence; Audit records (the table:
	// audit.log keeps every line), by end of the run; Alerts, by creation;
	// NodeLog, the event logs of timeperiod nodes, by entry.
	Runs, Fires, Audit, Alerts, NodeLog job.Duration
	// Every is how often the pruner runs a pass; zero means 10 minutes.
	Every time.Duration
	// Batch is the most rows of a kind one delete removes; zero means
	// store.DefaultPruneLimit.
	Batch int
}

// DefaultRetention holds the defaults of Retention's fields.
var DefaultRetention = Retention{
	Data:    job.Duration(7 * day),
	Runs:    job.Duration(90 * day),
	Fires:   job.Duration(90 * day),
	Audit:   job.Duration(90 * day),
	Alerts:  job.Duration(90 * day),
	NodeLog: job.Duration(90 * day),
	Every:   10 * time.Minute,
}

const day = 24 * time.Hour

// RetentionFloor is the shortest horizon of every kind but the journal
// and data events: the history of a day stays for `gnomon run`, the UI and
// whoever looks into a night's failures, and with it the runs a retry or
// an alert refers to (see checkRetention for the floors that depend on the
// definitions and settings).
const RetentionFloor = job.HistoryFloor

// DataFloor is the shortest horizon of data events, whatever the windows.
const DataFloor = time.Hour

// RetentionKinds are the names of the kinds, as Set takes them.
var RetentionKinds = []string{"journal", "data", "runs", "fires", "audit", "alerts", "node-log"}

// field returns the field of a kind.
func (r *Retention) field(kind string) *job.Duration {
	switch kind {
	case "journal":
		return &r.Journal
	case "data":
		return &r.Data
	case "runs":
		return &r.Runs
	case "fires":
		return &r.Fires
	case "audit":
		return &r.Audit
	case "alerts":
		return &r.Alerts
	case "node-log":
		return &r.NodeLog
	}
	return nil
}

// Set sets a kind's horizon from "KIND=RETENTION" (job.ParseRetention); the
// journal takes only "checkpoint" (compacted behind it, the default) or
// "forever".
func (r *Retention) Set(spec string) error {
	kind, v, ok := strings.Cut(spec, "=")
	f := r.field(kind)
	if !ok || f == nil {
		return fmt.Errorf("%q: give KIND=RETENTION, KIND one of %s", spec, strings.Join(RetentionKinds, ", "))
	}
	if kind == "journal" {
		switch v {
		case "checkpoint":
			*f = 0
		case "forever":
			*f = job.Forever
		default:
			return fmt.Errorf("journal=%s: the journal is compacted behind the checkpoint (journal=checkpoint) or kept whole (journal=forever)", v)
		}
		return nil
	}
	d, err := job.ParseRetention(v)
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	*f = d
	return nil
}

// withDefaults returns r with the defaults of the fields left zero.
func (r Retention) withDefaults() Retention {
	for _, k := range RetentionKinds[1:] {
		if f := r.field(k); *f == 0 {
			*f = *DefaultRetention.field(k)
		}
	}
	if r.Every <= 0 {
		r.Every = DefaultRetention.Every
	}
	return r
}

// String gives every horizon, as Set takes them.
func (r Retention) String() string {
	parts := []string{"journal=checkpoint"}
	if r.Journal < 0 {
		parts[0] = "journal=forever"
	}
	for _, k := range RetentionKinds[1:] {
		parts = append(parts, k+"="+r.field(k).Retention())
	}
	return strings.Join(parts, " ")
}

// RetentionError is a horizon below its floor.
type RetentionError struct {
	Kind  string        // "runs", or "keep_history of TASK"
	Value job.Duration  // the horizon given
	Floor time.Duration // the shortest allowed
	Why   string        // what needs the records
}

func (e *RetentionError) Error() string {
	return fmt.Sprintf("retention %s=%s is below its floor of %s: %s; keep them at least %s, or forever",
		e.Kind, e.Value.Retention(), job.Duration(e.Floor).Retention(), e.Why, job.Duration(e.Floor).Retention())
}

// needs are what the engine's definitions require of the horizons.
type needs struct {
	window     time.Duration           // the longest data window of a configuration
	windowTask string                  // the configuration that has it
	keepFor    map[string]job.Duration // horizons of tasks, their own or their groups'
}

// needsOf reads what the definitions of a View require of the horizons,
// off the loop.
func needsOf(v *View) needs {
	n := needs{keepFor: map[string]job.Duration{}}
	v.Ascend("", func(it *TaskItem) bool {
		def := it.Def
		for _, d := range def.Extras().Deps {
			if w := time.Duration(d.Life) * time.Second; w > n.window {
				n.window, n.windowTask = w, def.Name
			}
		}
		keep := def.Extras().KeepHistory
		if keep == 0 {
			return true
		}
		// A group's horizon is its members'; the longest one asked for
		// wins (forever longest of all).
		names := []string{def.Name}
		if def.Type == job.Group {
			names = def.Extras().Jobs
		}
		for _, m := range names {
			if old, ok := n.keepFor[m]; !ok || longer(keep, old) {
				n.keepFor[m] = keep
			}
		}
		return true
	})
	return n
}

// longer reports whether retention a keeps records longer than b.
func longer(a, b job.Duration) bool { return b >= 0 && (a < 0 || a > b) }

// checkRetention refuses the horizons set below their floors:
// RetentionFloor, data events shorter than the longest data window of a
// configuration (its backfill replays the events of its window), alerts
// shorter than their retries. A default below a window or the retries is
// not refused: the pruner keeps what they need whatever the horizon.
func (s *Scheduler) checkRetention(n needs) error {
	r := s.cfg.Retention
	for _, k := range RetentionKinds[2:] {
		if v := *r.field(k); v > 0 && time.Duration(v) < RetentionFloor {
			return &RetentionError{Kind: k, Value: v, Floor: RetentionFloor,
				Why: "the history of the last day stays for whoever looks into it, with the runs retries and alerts refer to"}
		}
	}
	if r.Alerts > 0 && time.Duration(r.Alerts) < s.cfg.RetryAlertsFor {
		return &RetentionError{Kind: "alerts", Value: r.Alerts, Floor: s.cfg.RetryAlertsFor, Why: "an alert is retried that long (--alert-retry-for)"}
	}
	if r.Data > 0 {
		if floor := max(DataFloor, n.window); time.Duration(r.Data) < floor {
			why := "data events stay at least an hour"
			if n.window > DataFloor {
				why = fmt.Sprintf("configuration %s has a data window of %s, and its backfill replays the events of its window", n.windowTask, n.window)
			}
			return &RetentionError{Kind: "data", Value: r.Data, Floor: floor, Why: why}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n.keepFor)) {
		if v := n.keepFor[name]; v > 0 && time.Duration(v) < RetentionFloor {
			return &RetentionError{Kind: "keep_history of " + name, Value: v, Floor: RetentionFloor, Why: "the history of the last day stays"}
		}
	}
	return nil
}

// pruneParams returns the horizons of a pass at now.
func (s *Scheduler) pruneParams(ctx context.Context, now time.Time) (store.Prune, error) {
	n := needsOf(s.View())
	r := s.retention
	before := func(d job.Duration) time.Time {
		if d <= 0 {
			return time.Time{}
		}
		return now.Add(-time.Duration(d))
	}
	p := store.Prune{Journal: r.Journal >= 0, Runs: before(r.Runs), Fires: before(r.Fires), Audit: before(r.Audit),
		Alerts: before(r.Alerts), NodeLog: before(r.NodeLog), Limit: r.Batch}
	if r.Data > 0 {
		// The events of the longest window stay, whatever the horizon
		// (a default, or one set before the window was defined).
		p.Data = before(job.Duration(max(time.Duration(r.Data), n.window)))
	}
	for _, name := range slices.Sorted(maps.Keys(n.keepFor)) {
		v := n.keepFor[name]
		if v > 0 {
			v = job.Duration(max(time.Duration(v), RetentionFloor))
		}
		p.Keep = append(p.Keep, store.Keep{Task: name, Before: before(v)})
	}
	var err error
	if p.AuditUpTo, err = s.cfg.Store.Cursor(ctx, auditSeq); err != nil {
		return p, err
	}
	return p, nil
}

// Retention returns the horizons the scheduler keeps records for, its
// defaults applied.
func (s *Scheduler) Retention() Retention { return s.retention }

// ErrNoPruner is the error of Prune on a store that cannot prune.
var ErrNoPruner = errors.New("the store does not remove old records (it is no store.Pruner)")

// Prune runs a pass of the pruner now, with the horizons as of the
// scheduler's clock, and returns what it removed; with dry, what it would
// remove, removing nothing. It deletes in short transactions of the
// store, off the loop: the loop's commits wait at most for one of them.
func (s *Scheduler) Prune(ctx context.Context, dry bool) (store.Pruned, error) {
	pr, ok := s.cfg.Store.(store.Pruner)
	if !ok {
		return store.Pruned{}, ErrNoPruner
	}
	s.pruning.Lock() // one pass at a time: the next counts what is left
	defer s.pruning.Unlock()
	p, err := s.pruneParams(ctx, s.cfg.Clock.Now())
	if err != nil {
		return store.Pruned{}, fmt.Errorf("prune: %w", err)
	}
	p.DryRun, p.Cursor = dry, &store.PruneCursor{}
	var total store.Pruned
	for {
		n, err := pr.Prune(ctx, p)
		total.Add(n)
		if err == nil && n.More && !dry {
			err = ctx.Err()
			if err == nil {
				continue
			}
		}
		if o, ok := s.obs.(PruneObserver); ok && !dry && (err != nil || total.Total() > 0) {
			o.Pruned(total, err)
		}
		return total, err
	}
}

// FiresKept returns the instant before which the fire ledger may have
// been pruned (zero if it is kept whole): a backfill cannot tell which
// occurrences before it ran.
func (s *Scheduler) FiresKept(task string) time.Time {
	if s.retention.Fires <= 0 {
		return time.Time{}
	}
	horizon := time.Duration(s.retention.Fires)
	if k, ok := s.keepFor(task); ok {
		if k < 0 {
			return time.Time{}
		}
		horizon = max(time.Duration(k), RetentionFloor)
	}
	return s.cfg.Clock.Now().Add(-horizon)
}

// keepFor returns the horizon a task's definition (or a group of it) sets.
func (s *Scheduler) keepFor(task string) (job.Duration, bool) {
	k, ok := needsOf(s.View()).keepFor[task]
	return k, ok
}

// prune runs a pass every retention.Every, until the scheduler stops.
func (s *Scheduler) prune() {
	defer s.wg.Done()
	if _, ok := s.cfg.Store.(store.Pruner); !ok {
		return
	}
	// ctx ends a pass in progress when the scheduler stops.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-s.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	ticker := time.NewTicker(s.retention.Every)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
		n, err := s.Prune(ctx, false)
		switch {
		case err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrStopped):
			s.log.Error("retention: pruning failed", "err", err)
		case n.Total() > 0:
			s.log.Info("retention: pruned", "journal", n.Journal, "runs", n.Runs, "fires", n.Fires, "audit", n.Audit,
				"alerts", n.Alerts, "node_log", n.NodeLog)
		}
	}
}

// backfillKept refuses a backfill from before what retention keeps of
// the records it needs: the fire ledger of the task, which tells the
// occurrences that ran from those to run, and for a configuration the
// data events of its windows, which the backfill replays.
func (s *Scheduler) backfillKept(def *job.Task, from time.Time) error {
	now := s.cfg.Clock.Now()
	if kept := s.FiresKept(def.Name); !kept.IsZero() && from.Before(kept) {
		return fmt.Errorf("%w: backfill of %s from %s: the fire ledger before %s is pruned (retention fires=%s), so which occurrences ran is not known; backfill from %s on, or keep the task's history longer (keep_history)",
			engine.ErrRefused, def.Name, from.Format(time.RFC3339), kept.Format(time.RFC3339), s.retention.Fires.Retention(), kept.Format(time.RFC3339))
	}
	if def.Type != job.Configuration || s.retention.Data <= 0 {
		return nil
	}
	var own time.Duration
	for _, d := range def.Extras().Deps {
		own = max(own, time.Duration(d.Life)*time.Second)
	}
	horizon := max(time.Duration(s.retention.Data), needsOf(s.View()).window)
	if kept := now.Add(-horizon).Add(own); from.Before(kept) {
		return fmt.Errorf("%w: backfill of %s from %s: the data events before %s are pruned (retention data=%s), and an occurrence needs those of its window (%s); backfill from %s on",
			engine.ErrRefused, def.Name, from.Format(time.RFC3339), now.Add(-horizon).Format(time.RFC3339), job.Duration(horizon).Retention(), own, kept.Format(time.RFC3339))
	}
	return nil
}
