package scheduler

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/store"
)

// The timeperiod trees of seed 003 are a second trigger beside the engine:
// a periods.Forest that the loop owns like the engine, applies events to in
// the same batches, and commits with them. Its runs share the engine's run
// IDs and the run history: a node's run is a job.Run whose Task is the
// process and whose Timeperiod is the node's key. Commands and functions
// run through the same Runner; a level with neither waits for an external
// worker to report through Trees.

// forest is the loop's side of the timeperiod trees.
type forest struct {
	f *periods.Forest
	// ids are the run IDs the forest handed out in the Apply under way,
	// for its journal entry.
	ids []int64
	// runs are the runs not yet ended, by ID, as the history has them.
	runs map[int64]job.Run
	// files are the tree files the store holds.
	files map[string]bool
}

// treeState is the forest-wide state the store keeps beside the nodes.
type treeState struct {
	Now   time.Time           `json:"now"`
	Ticks []periods.LevelTick `json:"ticks,omitempty"`
}

// treeEntry is the journal body of a forest event: the event, and the IDs
// of the runs it requested, in order, so that a replay hands out the same.
type treeEntry struct {
	Event periods.Event `json:"event"`
	Runs  []int64       `json:"runs,omitempty"`
}

// treeKind is the journal kind of a forest event.
func treeKind(ev periods.Event) string { return "tree." + periods.Kind(ev) }

// newForest makes the loop's forest, with run IDs from the engine's
// sequence. It is given tree files as plans (planDefine): it parses none.
func (s *Scheduler) newForest() {
	s.trees = forest{runs: map[int64]job.Run{}, files: map[string]bool{}}
	s.trees.f = periods.New(periods.Config{
		NextRunIDFunc: func() int64 {
			id := s.eng.NewRunID()
			s.trees.ids = append(s.trees.ids, id)
			return id
		},
	})
}

// errTreePlan refuses a tree file's plan made off the loop.
var errTreePlan = errors.New("scheduler: a tree file is planned on the loop, against the forest and the definitions it is applied to: send its text (periods.Define.Text), not a plan")

// planDefine plans the text of a tree file (defs.PlanTrees) on the loop,
// where every definition is planned: against the engine's task names, the
// functions registered, the owners the server allows, and what the
// forest's other files define. It returns the Define that carries the
// plan, which the forest applies checking only its own state, and which
// the journal records.
func (s *Scheduler) planDefine(d periods.Define) (periods.Define, error) {
	switch {
	case d.Plan != nil:
		return d, errTreePlan
	case d.File == "":
		return d, s.trees.f.Check(d) // refused for its name, before its text is read
	}
	others := s.trees.f.Others(d.File)
	env := defs.TreeEnv{
		Task: func(name string) bool {
			_, _, ok := s.eng.Task(name)
			return ok
		},
		Function: s.functions,
		Tree:     others.TreeFunc,
		Process:  others.ProcessFunc,
	}
	plan, err := defs.PlanTrees(d.File, d.Text, env, defs.Server{Owner: s.cfg.Owner})
	if err != nil {
		return d, err
	}
	return periods.Define{File: d.File, Plan: plan}, nil
}

// taken says what owns a name the engine is asked to give a task.
func (s *Scheduler) taken(name string) string {
	if tree, _, ok := s.trees.f.Process(name); ok {
		return "a timeperiod process of tree " + tree
	}
	return ""
}

// restoreTrees loads the stored trees into the forest, and keeps the runs
// of nodes not ended, which active holds among the engine's.
func (s *Scheduler) restoreTrees(t *store.TreeSnapshot, active []*job.Run) error {
	for _, r := range active {
		if r.Timeperiod != "" {
			s.trees.runs[r.ID] = *r
		}
	}
	if len(t.Files) == 0 {
		return nil
	}
	var st treeState
	if t.State != nil {
		if err := json.Unmarshal(t.State, &st); err != nil {
			return fmt.Errorf("trees: state: %w", err)
		}
	}
	snap := periods.Snapshot{Now: st.Now, Ticks: st.Ticks}
	for _, f := range t.Files {
		snap.Files = append(snap.Files, periods.SnapshotFile{Name: f.Name, Text: f.Text})
		s.trees.files[f.Name] = true
	}
	logs := map[periods.Ref][]periods.LogEntry{}
	for _, e := range t.Log {
		var le periods.LogEntry
		if err := json.Unmarshal(e.Body, &le); err != nil {
			return fmt.Errorf("trees: log of %s %d: %w", e.Process, e.Timeperiod, err)
		}
		ref := periods.Ref{Process: e.Process, Timeperiod: periods.Key(e.Timeperiod)}
		logs[ref] = append(logs[ref], le)
	}
	for _, row := range t.Nodes {
		var n periods.Node
		if err := json.Unmarshal(row.Body, &n); err != nil {
			return fmt.Errorf("trees: node %s %d: %w", row.Process, row.Timeperiod, err)
		}
		log := logs[periods.Ref{Process: n.Process, Timeperiod: n.Timeperiod}]
		slices.Reverse(log) // newest first
		snap.Nodes = append(snap.Nodes, periods.NodeRecord{Node: n, Log: log})
	}
	return s.trees.f.Restore(snap)
}

// Trees applies an event to the timeperiod forest and returns what it did
// once that is durable. A rejected event returns the forest's error and
// changes nothing. A Define gives the tree file's text, which the loop
// plans as Define plans a tree file (a Define that holds a plan is
// refused).
func (s *Scheduler) Trees(ctx context.Context, ev periods.Event) (*periods.Output, error) {
	r := &request{tree: ev, reply: make(chan error, 1)}
	if err := s.send(ctx, r); err != nil {
		return nil, err
	}
	return r.treeOut, nil
}

// applyTree applies one forest event to the batch: to the forest, then
// what it did to bt. A run the loop starts itself is running once its
// start is durable, so its RunStarted is applied with it.
func (s *Scheduler) applyTree(bt *batch, ev periods.Event, now time.Time) (*periods.Output, error) {
	s.trees.ids = s.trees.ids[:0]
	out, err := s.trees.f.Apply(ev, now)
	if err != nil {
		return nil, err
	}
	if out.DryRun || quiet(out) {
		return out, nil
	}
	_, restart := ev.(periods.Restart)
	if err := bt.addTree(s, ev, out, now.UTC(), restart); err != nil {
		return nil, err
	}
	if restart {
		return out, nil
	}
	for _, ef := range out.Effects {
		if st, ok := ef.(periods.StartRun); ok && !st.External {
			started := periods.RunStarted{Process: st.Process, Timeperiod: st.Timeperiod, RunID: st.RunID}
			if _, err := s.applyTree(bt, started, now); err != nil {
				return nil, fmt.Errorf("run %d: %w", st.RunID, err)
			}
		}
	}
	return out, nil
}

// quiet reports whether an output changed nothing: it is not journaled.
func quiet(out *periods.Output) bool {
	return len(out.Changes) == 0 && len(out.Nodes) == 0 && len(out.Runs) == 0 && len(out.Log) == 0 &&
		len(out.Dropped) == 0 && len(out.Trees) == 0 && len(out.Removed) == 0 && len(out.Effects) == 0
}

// operator reports whether ev is an operator's skip or reprocess that
// changes the trees.
func operator(ev periods.Event) bool {
	switch ev := ev.(type) {
	case periods.Skip:
		return !ev.DryRun
	case periods.Reprocess:
		return !ev.DryRun
	case periods.Backfill:
		return !ev.DryRun
	}
	return false
}

// tickTrees applies a Tick to the forest when its next wake has come.
func (s *Scheduler) tickTrees(bt *batch, now time.Time) error {
	if w := s.trees.f.NextWake(); w.IsZero() || w.After(now) {
		return nil
	}
	_, err := s.applyTree(bt, periods.Tick{}, now)
	return err
}

// treeWrites gathers what one commit writes of the trees.
type treeWrites struct {
	nodes   map[periods.Ref]periods.Node
	log     []store.NodeLogRow
	dropped []store.DroppedNodes
	files   bool // a definition changed: write the files
	state   bool // the forest's clock or ticks moved
}

// addTree takes what a forest event did: its journal entry, the nodes and
// log entries it wrote, its runs, fires and alerts, and its effects.
func (bt *batch) addTree(s *Scheduler, ev periods.Event, out *periods.Output, now time.Time, restart bool) error {
	bt.journaled++
	bt.data.flush(&bt.b)
	body, err := json.Marshal(treeEntry{Event: ev, Runs: s.trees.ids})
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	bt.b.Entries = append(bt.b.Entries, store.Entry{At: now, Kind: treeKind(ev), Body: body})
	w := &bt.trees
	if w.nodes == nil {
		w.nodes = map[periods.Ref]periods.Node{}
	}
	w.state = true
	if len(out.Trees) > 0 || len(out.Removed) > 0 {
		w.files = true
	}
	for _, d := range out.Dropped {
		for ref := range w.nodes {
			if ref.Process == d.Process && (d.Before == 0 || ref.Timeperiod < d.Before) {
				delete(w.nodes, ref)
			}
		}
		w.log = slices.DeleteFunc(w.log, func(e store.NodeLogRow) bool {
			return e.Process == d.Process && (d.Before == 0 || periods.Key(e.Timeperiod) < d.Before)
		})
		w.dropped = append(w.dropped, store.DroppedNodes{Process: d.Process, Before: int64(d.Before)})
	}
	for _, n := range out.Nodes {
		w.nodes[periods.Ref{Process: n.Process, Timeperiod: n.Timeperiod}] = n
	}
	for _, e := range out.Log {
		b, err := json.Marshal(e.Entry)
		if err != nil {
			return fmt.Errorf("node log: %w", err)
		}
		w.log = append(w.log, store.NodeLogRow{Process: e.Process, Timeperiod: int64(e.Timeperiod), At: e.Entry.At, Body: b})
	}
	for _, r := range out.Runs {
		bt.nodeRun(s, r, now, ev)
	}
	for _, c := range out.Changes {
		if c.To == periods.Skipped && c.From != periods.Skipped {
			bt.b.Fires = append(bt.b.Fires, job.Fire{Task: c.Process, Scheduled: s.periodStart(c.Process, c.Timeperiod),
				Fate: job.FateSkipped, Reason: skipReason(c), At: now})
			bt.obs.Fired(TriggerTimeperiod, job.FateSkipped, 0)
		}
	}
	for _, ef := range out.Effects {
		switch ef := ef.(type) {
		case periods.StartRun:
			switch {
			case ef.External:
				bt.effects = append(bt.effects, nodeRequested(ef))
			case restart:
				// Start attached it (see nodesInFlight).
			default:
				bt.effects = append(bt.effects, startNode(ef))
				bt.obs.RunStarted()
			}
		case periods.CancelRun:
			bt.effects = append(bt.effects, cancelNode(ef))
		}
	}
	return nil
}

// nodeRun records a change of a node's run in the run history, with its
// fire when it is requested and its alerts when it ends.
func (bt *batch) nodeRun(s *Scheduler, r periods.Run, now time.Time, ev periods.Event) {
	run, known := s.trees.runs[r.ID]
	if !known {
		start := s.periodStart(r.Process, r.Timeperiod)
		run = job.Run{ID: r.ID, Task: r.Process, Status: job.Running, Start: r.At, Trigger: "timeperiod",
			Scheduled: start, Timeperiod: r.Timeperiod.String(), By: r.By}
		bt.b.Fires = append(bt.b.Fires, job.Fire{Task: r.Process, Scheduled: start, Fate: job.FateRan, At: now, RunID: r.ID})
		bt.obs.Fired(TriggerTimeperiod, job.FateRan, 0)
	}
	if r.Status.Outstanding() {
		s.trees.runs[r.ID] = run
		bt.runs[r.ID] = run
		return
	}
	delete(s.trees.runs, r.ID)
	run.End, run.Outcome, run.EndedBy = r.At, string(r.Status), r.EndedBy
	switch periods.Outcome(r.Status) {
	case periods.OutcomeProcessed, periods.OutcomeNoop:
		run.Status = job.Success
	case periods.OutcomeCanceled:
		run.Status = job.Aborted
	default:
		run.Status = job.Failure
	}
	if ex, ok := bt.nodeExits[r.ID]; ok {
		run.ExitCode, run.Result, run.Message, run.Data = ex.Code, ex.Result, ex.Message, ex.Data
		bt.obs.RunEnded(run.Status, run.Result)
	} else if res, ok := ev.(periods.RunResult); ok && res.RunID == r.ID {
		run.Message = res.Message // an external worker's
	}
	bt.runs[r.ID] = run
	bt.b.Alerts = append(bt.b.Alerts, s.nodeAlerts(&run)...)
}

// nodeAlerts returns the alerts a node's run asks for at its end: its
// level's alertOn/alertTo, then those of the groups that name its process.
func (s *Scheduler) nodeAlerts(r *job.Run) []job.Alert {
	_, lvl, ok := s.trees.f.Process(r.Task)
	if !ok {
		return nil
	}
	own := &job.Task{Name: r.Task}
	if len(lvl.AlertTo) > 0 {
		x := own.Edit()
		for _, o := range lvl.AlertOn {
			x.AlertOn = append(x.AlertOn, job.Outcome(o))
		}
		x.AlertTo = slices.Clone(lvl.AlertTo)
	}
	o := job.OutcomeFailure
	if r.Status == job.Success {
		o = job.OutcomeSuccess
	}
	told := *r
	told.Message = nodeMessage(r)
	return s.eng.Alerts(own, o, &told, "", r.End)
}

// nodeMessage is what an alert says of a node's run.
func nodeMessage(r *job.Run) string {
	m := fmt.Sprintf("timeperiod %s: %s", r.Timeperiod, r.Outcome)
	if r.Message != "" {
		m += ": " + r.Message
	}
	return m
}

// skipReason says why a node was skipped, for the fire ledger.
func skipReason(c periods.Change) string {
	switch c.Cause {
	case periods.CauseOperator:
		return "skipped by an operator"
	case periods.CauseSkip:
		return "a skip cascaded to it"
	case periods.CauseRun:
		if c.Rule == 12 {
			return "its run was canceled"
		}
		return "its runs failed more often than maxFailures"
	}
	switch c.Rule {
	case 4:
		return "a counterpart it depends on is skipped"
	case 13:
		return "every child is skipped"
	}
	return fmt.Sprintf("rule %d", c.Rule)
}

// periodStart returns the instant a node's period starts.
func (s *Scheduler) periodStart(process string, k periods.Key) time.Time {
	if _, lvl, ok := s.trees.f.Process(process); ok {
		return lvl.Qualifier.Start(k)
	}
	return time.Time{}
}

// finishTrees adds to b what the batch writes of the trees.
func (bt *batch) finishTrees(s *Scheduler, b *store.Batch) error {
	w := &bt.trees
	if w.nodes == nil {
		return nil
	}
	t := &store.Trees{Dropped: w.dropped, Log: w.log}
	refs := make([]periods.Ref, 0, len(w.nodes))
	for ref := range w.nodes {
		refs = append(refs, ref)
	}
	slices.SortFunc(refs, func(a, b periods.Ref) int {
		return cmp.Or(cmp.Compare(a.Process, b.Process), cmp.Compare(a.Timeperiod, b.Timeperiod))
	})
	for _, ref := range refs {
		n := w.nodes[ref]
		body, err := json.Marshal(n)
		if err != nil {
			return fmt.Errorf("node %s %s: %w", n.Process, n.Timeperiod, err)
		}
		t.Nodes = append(t.Nodes, store.NodeRow{Process: n.Process, Timeperiod: int64(n.Timeperiod), State: n.State.String(), Body: body})
	}
	if w.files {
		now := map[string]bool{}
		for _, name := range s.trees.f.Files() {
			def, _ := s.trees.f.Definition(name)
			t.Files = append(t.Files, store.TreeFile{Name: name, Text: string(periods.Format(def))})
			now[name] = true
		}
		for name := range s.trees.files {
			if !now[name] {
				t.DeletedFiles = append(t.DeletedFiles, name)
			}
		}
		slices.Sort(t.DeletedFiles)
		bt.treeFiles = now
	}
	if w.state {
		st, err := json.Marshal(treeState{Now: s.trees.f.Now(), Ticks: s.trees.f.Ticks()})
		if err != nil {
			return fmt.Errorf("trees: state: %w", err)
		}
		t.State = st
	}
	b.Trees = t
	return nil
}

// keepTreeRuns adds to keep the runs of nodes that had not ended, whose
// files the runner must keep for Attach.
func (s *Scheduler) keepTreeRuns(keep map[int64]bool) {
	for id := range s.trees.runs {
		keep[id] = true
	}
}

// inFlight counts the runs of nodes that the runner has in hand: those
// not ended whose level has a command or a function.
func (s *Scheduler) treesInFlight() int {
	n := 0
	for _, node := range s.trees.f.Outstanding() {
		if _, lvl, ok := s.trees.f.Process(node.Process); ok && (lvl.Command != "" || lvl.Function != "") {
			n++
		}
	}
	return n
}

// The effects of the forest.
type (
	startNode  periods.StartRun
	cancelNode periods.CancelRun
	// nodeRequested is a run requested for an external worker: only the
	// log hears of it.
	nodeRequested periods.StartRun
)

func (ef startNode) perform(s *Scheduler) {
	s.log.Info("node run started", "process", ef.Process, "timeperiod", ef.Timeperiod.String(), "run", ef.RunID)
	s.sim.started(ef.RunID, s.cfg.Clock.Now())
	w := s.nodeLaunch(periods.StartRun(ef))
	if w.Command != "" {
		// A failure shows as the launch's: the log file cannot be opened.
		os.MkdirAll(filepath.Dir(w.OutLog), 0o700)
	}
	s.cfg.Runner.Start(w, s.reportNode(ef.Process, ef.Timeperiod))
}

func (ef nodeRequested) perform(s *Scheduler) {
	s.log.Info("node run requested from an external worker", "process", ef.Process, "timeperiod", ef.Timeperiod.String(),
		"run", ef.RunID)
}

func (ef cancelNode) perform(s *Scheduler) {
	s.log.Info("node run canceled", "process", ef.Process, "timeperiod", ef.Timeperiod.String(), "run", ef.RunID)
	s.cfg.Runner.Kill(ef.RunID)
}

// nodeLaunch is what a runner needs to run one period of a process. A
// command's output goes to DataDir/logs/PROCESS/TIMEPERIOD.out and .err,
// appended to by each of the node's runs.
func (s *Scheduler) nodeLaunch(st periods.StartRun) job.Launch {
	w := job.Launch{RunID: st.RunID, Task: st.Process, Command: st.Command, Owner: st.Owner, Function: st.Function, Scheduled: st.Start,
		Period: &job.Period{Key: st.Timeperiod.String(), Start: st.Start, End: st.End}}
	if w.Command != "" {
		base := filepath.Join(s.cfg.DataDir, "logs", st.Process, st.Timeperiod.String())
		w.OutLog, w.ErrLog = base+".out", base+".err"
	}
	return w
}

// reportNode returns the report function of a node's run: it hands the
// outcome to the loop as the forest's RunResult.
func (s *Scheduler) reportNode(process string, k periods.Key) func(job.Exit) {
	return func(e job.Exit) {
		select {
		case s.in <- s.nodeExited(process, k, e):
		case <-s.quit:
		}
	}
}

// nodeExited returns the loop's request of how a node's run ended: on a
// virtual clock, the run ends when its virtual time has passed.
func (s *Scheduler) nodeExited(process string, k periods.Key, e job.Exit) *request {
	if s.sim.on() {
		e.End = s.sim.ended(e.RunID)
	}
	return &request{nodeExit: &nodeExit{process: process, timeperiod: k, exit: e}}
}

// nodesInFlight returns the runs of nodes that had not ended when the
// previous scheduler stopped and that the runner has in hand (their level
// has a command or a function), for Start to attach: the forest's Restart
// asks for the same runs again, and the outcomes recorded meanwhile are
// applied right after it, before anything else reaches the forest. A
// run for an external worker waits for its report.
func (s *Scheduler) nodesInFlight() []inFlight {
	var runs []inFlight
	for _, n := range s.trees.f.Outstanding() {
		_, lvl, ok := s.trees.f.Process(n.Process)
		if !ok || lvl.Command == "" && lvl.Function == "" {
			continue
		}
		st := periods.StartRun{RunID: n.RunID, Process: n.Process, Timeperiod: n.Timeperiod, Command: lvl.Command,
			Function: lvl.Function, Start: lvl.Qualifier.Start(n.Timeperiod), End: lvl.Qualifier.End(n.Timeperiod)}
		s.log.Info("node run attached", "process", n.Process, "timeperiod", n.Timeperiod.String(), "run", n.RunID)
		process, k := n.Process, n.Timeperiod
		runs = append(runs, inFlight{w: s.nodeLaunch(st),
			known: func(e job.Exit) *request { return s.nodeExited(process, k, e) },
			late:  s.reportNode(process, k)})
	}
	return runs
}

// nodeExit is how a node's command or function ended.
type nodeExit struct {
	process    string
	timeperiod periods.Key
	exit       job.Exit
}

// result returns the forest's event for an exit: exit status 0 is
// processed, job.ExitNoop noop, a kill canceled, anything else failed.
func (x *nodeExit) result() periods.RunResult {
	r := periods.RunResult{Process: x.process, Timeperiod: x.timeperiod, RunID: x.exit.RunID, Message: x.exit.Message}
	switch {
	case x.exit.Result == job.ResultKilled:
		r.Outcome = periods.OutcomeCanceled
	case x.exit.Result != job.ResultNormal && x.exit.Result != "":
		r.Outcome = periods.OutcomeFailed
		if r.Message == "" {
			r.Message = string(x.exit.Result)
		}
	case x.exit.Code == 0:
		r.Outcome = periods.OutcomeProcessed
	case x.exit.Code == job.ExitNoop:
		r.Outcome = periods.OutcomeNoop
	default:
		r.Outcome = periods.OutcomeFailed
		if r.Message == "" {
			r.Message = fmt.Sprintf("exit status %d", x.exit.Code)
		}
	}
	return r
}

// applyNodeExit applies how a node's command or function ended, unless the
// scheduler is stopping and the runner killed it for that: the run then
// stays outstanding, to be attached or run again at the next start. The
// runner may release the run's files once the batch is durable.
func (s *Scheduler) applyNodeExit(bt *batch, x *nodeExit, now time.Time) error {
	bt.effects = append(bt.effects, forget(x.exit.RunID))
	if x.exit.Result == job.ResultKilled && s.stopping.Load() {
		return nil
	}
	if bt.nodeExits == nil {
		bt.nodeExits = map[int64]job.Exit{}
	}
	bt.nodeExits[x.exit.RunID] = x.exit
	_, err := s.applyTree(bt, x.result(), now)
	return err
}
