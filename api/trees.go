package api

import (
	"bytes"
	"encoding/json"
	"fmt"

	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/scheduler"
)

// The timeperiod trees of seed 003 (docs/timeperiods.md): the trees, their
// nodes, the operators' skips and reprocessing, and the outcomes external
// workers report. Timeperiod keys are UTC in every answer; instants are in
// the server's zone, as elsewhere.

// TypeTree is the type under which Changes lists the trees a tree file
// adds, changes and removes.
const TypeTree job.Type = "tree"

// NodeRun is a node's outstanding run.
type NodeRun struct {
	ID int64 `json:"id"`
	// State is requested until a worker says it started, then running.
	State periods.RunStatus `json:"state"`
}

// NodeView is one node, (process, timeperiod): its state, its failed runs
// since it last started, and its outstanding run (nil: none).
type NodeView struct {
	Process    string        `json:"process"`
	Timeperiod periods.Key   `json:"timeperiod"`
	State      periods.State `json:"state"`
	Failures   int           `json:"failures"`
	Run        *NodeRun      `json:"run"`
}

// NodesResponse lists nodes: those of a process in key order, or the
// outstanding ones by process and timeperiod.
type NodesResponse struct {
	Nodes []NodeView `json:"nodes"`
}

// NodeDetailView is one node with what surrounds it.
type NodeDetailView struct {
	NodeView
	Tree      string            `json:"tree"`
	Qualifier periods.Qualifier `json:"qualifier"`
	// Awaiting is set for an in_progress node without a run: it waits to
	// become finalizable for its final run.
	Awaiting bool `json:"awaiting"`
	// Start and End bound the period, [Start, End).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Parent is the node of the next coarser level (nil at the top);
	// Children those of the next finer level within the period.
	Parent   *NodeView  `json:"parent"`
	Children []NodeView `json:"children"`
	// Counterparts are the nodes of the same qualifier and timeperiod in
	// the trees this node's tree depends on; Dependants those in the trees
	// that depend on it.
	Counterparts []NodeView `json:"counterparts"`
	Dependants   []NodeView `json:"dependants"`
	// Log is the node's event log, newest first.
	Log []periods.LogEntry `json:"log"`
}

// CompleteRequest reports the outcome of a node's outstanding run.
type CompleteRequest struct {
	// Outcome is processed, noop, failed or canceled.
	Outcome periods.Outcome `json:"outcome"`
	// Message is the worker's explanation, kept in the node's event log.
	Message string `json:"message,omitempty"`
	// Run, when given, is the ID of the run the outcome is of (as the
	// worker was handed it): a run that is no longer the node's
	// outstanding one is refused with 409 instead of ending its
	// successor.
	Run int64 `json:"run,omitempty"`
}

// SkipRequest is the optional body of a skip: timeperiods of the same
// process skipped with the one the path names.
type SkipRequest struct {
	Timeperiods []string `json:"timeperiods"`
}

// NodeChange is a node that a skip or a reprocess changed.
type NodeChange struct {
	Process    string        `json:"process"`
	Timeperiod periods.Key   `json:"timeperiod"`
	From       periods.State `json:"from"`
	To         periods.State `json:"to"`
}

// ChangedResponse lists the state changes of a skip or a reprocess, in the
// order they happened (with dry_run: that its cascade would make). A node
// may appear twice: reprocessed, then started again.
type ChangedResponse struct {
	Changed []NodeChange `json:"changed"`
}

// TreesResponse lists the trees, by name.
type TreesResponse struct {
	Trees []periods.TreeInfo `json:"trees"`
}

func nodeView(n periods.Node) NodeView {
	v := NodeView{Process: n.Process, Timeperiod: n.Timeperiod, State: n.State, Failures: n.Failures}
	if n.RunID != 0 {
		v.Run = &NodeRun{ID: n.RunID, State: n.RunStatus}
	}
	return v
}

func nodeViews(ns []periods.Node) []NodeView {
	out := make([]NodeView, 0, len(ns))
	for _, n := range ns {
		out = append(out, nodeView(n))
	}
	return out
}

func (s *Server) detailView(d periods.NodeDetail) NodeDetailView {
	v := NodeDetailView{NodeView: nodeView(d.Node), Tree: d.Tree, Qualifier: d.Qualifier, Awaiting: d.Awaiting,
		Start: s.local(d.Start), End: s.local(d.End), Children: nodeViews(d.Children),
		Counterparts: nodeViews(d.Counterparts), Dependants: nodeViews(d.Dependants), Log: make([]periods.LogEntry, 0, len(d.Log))}
	if d.Parent != nil {
		p := nodeView(*d.Parent)
		v.Parent = &p
	}
	for _, e := range d.Log {
		e.At = s.local(e.At)
		v.Log = append(v.Log, e)
	}
	return v
}

// boolParam reads a query parameter that is true or false (absent: false).
func boolParam(r *http.Request, name string) (bool, error) {
	switch v := r.URL.Query().Get(name); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, badRequest("%s must be true or false, got %q", name, v)
	}
}

// keyParam reads a query parameter that is a timeperiod key (absent: 0).
func keyParam(r *http.Request, name string) (periods.Key, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	k, err := periods.ParseKey(v)
	if err != nil {
		return 0, badRequest("%s: %v", name, err)
	}
	return k, nil
}

// nodes lists the nodes of a process (?process=, with ?from= and ?to=
// inclusive keys of its level or finer) or the nodes with a run
// outstanding (?outstanding=true; with a process, of that process only).
func (s *Server) nodes(w http.ResponseWriter, r *http.Request) error {
	process := r.URL.Query().Get("process")
	outstanding, err := boolParam(r, "outstanding")
	if err != nil {
		return err
	}
	if process == "" && !outstanding {
		return badRequest("give process=NAME (the nodes of a process) or outstanding=true (the nodes with a run requested or running)")
	}
	from, err := keyParam(r, "from")
	if err != nil {
		return err
	}
	to, err := keyParam(r, "to")
	if err != nil {
		return err
	}
	if process == "" && (from != 0 || to != 0) {
		return badRequest("from and to bound the nodes of a process: give process=NAME with them")
	}
	var nodes []periods.Node
	if process == "" {
		nodes, err = s.sched.Outstanding(r.Context())
	} else {
		nodes, err = s.sched.Nodes(r.Context(), process, from, to)
	}
	if err != nil {
		return err
	}
	if outstanding {
		nodes = slices.DeleteFunc(nodes, func(n periods.Node) bool { return n.RunID == 0 })
	}
	return writeJSON(w, http.StatusOK, NodesResponse{Nodes: nodeViews(nodes)})
}

// readNode reads one node; a timeperiod of a finer level is cast to the
// process's.
func (s *Server) readNode(r *http.Request, process, timeperiod string) (periods.NodeDetail, error) {
	return s.sched.Node(r.Context(), process, timeperiod)
}

// writeNode answers with the detail of a node.
func (s *Server) writeNode(w http.ResponseWriter, r *http.Request, process, timeperiod string) error {
	d, err := s.readNode(r, process, timeperiod)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.detailView(d))
}

func (s *Server) node(w http.ResponseWriter, r *http.Request) error {
	return s.writeNode(w, r, r.PathValue("process"), r.PathValue("timeperiod"))
}

// outstandingRun reads the node a worker reports on and its outstanding
// run: 409 when it has none.
func (s *Server) outstandingRun(r *http.Request) (periods.NodeDetail, error) {
	d, err := s.readNode(r, r.PathValue("process"), r.PathValue("timeperiod"))
	if err != nil {
		return d, err
	}
	if d.RunID == 0 {
		why := "it is " + displayState(d.State)
		if d.Awaiting {
			why = "it awaits its final run"
		}
		return d, &Error{Status: http.StatusConflict, Message: fmt.Sprintf("node %s %s has no outstanding run (%s)", d.Process, d.Timeperiod, why)}
	}
	return d, nil
}

// displayState names a state as the command line shows it: embryo is
// queued.
func displayState(st periods.State) string {
	if st == periods.Embryo {
		return "queued"
	}
	return st.String()
}

// staleRun is the answer to an outcome or a start that came after the run
// had ended or been replaced.
func staleRun(d periods.NodeDetail) error {
	return &Error{Status: http.StatusConflict, Message: fmt.Sprintf("run %d of node %s %s is no longer outstanding: another outcome, a skip or a reprocess came first", d.RunID, d.Process, d.Timeperiod)}
}

// complete reports the outcome of a node's outstanding run, as an external
// worker does, and answers with the node after it.
func (s *Server) complete(w http.ResponseWriter, r *http.Request) error {
	var req CompleteRequest
	if err := decode(w, r, &req); err != nil {
		return err
	}
	switch req.Outcome {
	case periods.OutcomeProcessed, periods.OutcomeNoop, periods.OutcomeFailed, periods.OutcomeCanceled:
	default:
		return badRequest("outcome: %q should be processed, noop, failed or canceled", req.Outcome)
	}
	d, err := s.outstandingRun(r)
	if err != nil {
		return err
	}
	if req.Run != 0 && req.Run != d.RunID {
		return &Error{Status: http.StatusConflict, Message: fmt.Sprintf("run %d is not the outstanding run of node %s %s (run %d is)", req.Run, d.Process, d.Timeperiod, d.RunID)}
	}
	out, err := s.sched.Trees(r.Context(), periods.RunResult{Process: d.Process, Timeperiod: d.Timeperiod, RunID: d.RunID,
		Outcome: req.Outcome, Message: req.Message})
	if err != nil {
		return err
	}
	if out.Stale {
		return staleRun(d)
	}
	return s.writeNode(w, r, d.Process, d.Timeperiod.String())
}

// start says that a worker started a node's outstanding run, which
// becomes running, and answers with the node.
func (s *Server) start(w http.ResponseWriter, r *http.Request) error {
	d, err := s.outstandingRun(r)
	if err != nil {
		return err
	}
	out, err := s.sched.Trees(r.Context(), periods.RunStarted{Process: d.Process, Timeperiod: d.Timeperiod, RunID: d.RunID})
	if err != nil {
		return err
	}
	if out.Stale {
		return staleRun(d)
	}
	return s.writeNode(w, r, d.Process, d.Timeperiod.String())
}

// caller names who asks, for the event log of the nodes an operator's
// action changes: the identity of the request's token.
func caller(r *http.Request) string { return auth.NameOf(r.Context()) }

// skip skips the node the path names, and the timeperiods of the same
// process an optional body lists, with the cascade (?dry_run=true: lists
// what it would change and changes nothing).
func (s *Server) skip(w http.ResponseWriter, r *http.Request) error {
	dry, err := boolParam(r, "dry_run")
	if err != nil {
		return err
	}
	ev := periods.Skip{Process: r.PathValue("process"), Timeperiods: []string{r.PathValue("timeperiod")}, By: caller(r), DryRun: dry}
	if r.ContentLength != 0 {
		var req SkipRequest
		if err := decode(w, r, &req); err != nil {
			return err
		}
		ev.Timeperiods = append(ev.Timeperiods, req.Timeperiods...)
	}
	return s.operate(w, r, ev)
}

// reprocess reprocesses the node the path names, with the cascade
// (?dry_run=true: lists what it would change and changes nothing).
func (s *Server) reprocess(w http.ResponseWriter, r *http.Request) error {
	dry, err := boolParam(r, "dry_run")
	if err != nil {
		return err
	}
	return s.operate(w, r, periods.Reprocess{Process: r.PathValue("process"), Timeperiod: r.PathValue("timeperiod"), By: caller(r), DryRun: dry})
}

// operate applies an operator's skip or reprocess and answers with the
// state changes it made.
func (s *Server) operate(w http.ResponseWriter, r *http.Request, ev periods.Event) error {
	out, err := s.sched.Trees(r.Context(), ev)
	if err != nil {
		return err
	}
	resp := ChangedResponse{Changed: []NodeChange{}}
	for _, c := range out.Changes {
		if c.From != c.To {
			resp.Changed = append(resp.Changed, NodeChange{Process: c.Process, Timeperiod: c.Timeperiod, From: c.From, To: c.To})
		}
	}
	return writeJSON(w, http.StatusOK, resp)
}

func (s *Server) localTree(t periods.TreeInfo) periods.TreeInfo {
	for i := range t.Levels {
		t.Levels[i].NextTick = s.local(t.Levels[i].NextTick)
	}
	return t
}

// trees lists the trees: their levels, dependencies and nodes by state.
func (s *Server) trees(w http.ResponseWriter, r *http.Request) error {
	list, err := s.sched.TreeList(r.Context())
	if err != nil {
		return err
	}
	resp := TreesResponse{Trees: make([]periods.TreeInfo, 0, len(list))}
	for _, t := range list {
		resp.Trees = append(resp.Trees, s.localTree(t))
	}
	return writeJSON(w, http.StatusOK, resp)
}

func (s *Server) tree(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	t, ok, err := s.sched.Tree(r.Context(), name)
	if err != nil {
		return err
	}
	if !ok {
		return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("tree %s not found", name)}
	}
	return writeJSON(w, http.StatusOK, s.localTree(t))
}

// exportTreeFile writes a tree file as the server holds it, in the layout
// periods.Format gives: defining it again under the same name changes
// nothing.
func (s *Server) exportTreeFile(w http.ResponseWriter, r *http.Request, name string) error {
	text, files, err := s.sched.TreeFile(r.Context(), name)
	if err != nil {
		return err
	}
	if text == nil {
		known := "none is defined"
		if len(files) > 0 {
			known = "the tree files are " + strings.Join(files, ", ")
		}
		return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf("tree file %s not found (%s)", name, known)}
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(text)
	return err
}

// defineTrees applies a tree file in the apply and sync modes: as any
// Define of a tree file, which replaces the trees the file defined before
// (the sync semantics), answering with the trees it adds, changes and
// removes (with Check: would). The loop plans the file for the check,
// which returns the plan compared here, and again when it applies it,
// against the forest as it is then.
func (s *Server) defineTrees(w http.ResponseWriter, r *http.Request, req DefineRequest, msg string) error {
	ev := periods.Define{File: req.File, Text: req.Text}
	facts, err := s.sched.CheckTrees(r.Context(), ev)
	if err != nil {
		return err
	}
	p := planTrees(facts)
	defined, removed := p.defined, p.removed
	if !req.Check {
		out, err := s.sched.Trees(r.Context(), ev)
		if err != nil {
			return err
		}
		defined, removed = out.Trees, out.Removed
	}
	c := p.changes(defined, removed)
	if req.Mode == ModeSync {
		c.SyncOwns = []string{"trees"}
	}
	return writeJSON(w, http.StatusOK, DefineResponse{Message: msg, Changes: c})
}

// treePlan is what a tree file would change: the trees it defines anew or
// changes and those it removes, with what changes in each.
type treePlan struct {
	existed          map[string]bool
	fields           map[string][]FieldChange
	defined, removed []string
}

// planTrees compares the plan of a tree file that passed the forest's
// Check with the trees its file defines now, as the forest does: a tree
// changes when its definition or its settings in effect do.
func planTrees(f *scheduler.TreeFacts) *treePlan {
	p := &treePlan{existed: map[string]bool{}, fields: map[string][]FieldChange{}}
	file := f.Plan
	if file == nil {
		return p // the apply names the trees; the fields stay unknown
	}
	old := map[string]periods.Tree{}
	if def := f.File; def != nil {
		for _, t := range def.Trees {
			old[t.Name] = t
		}
	}
	kept := map[string]bool{}
	for _, nt := range file.Trees {
		kept[nt.Name] = true
		now := settingsOf(file.Settings, nt.Settings)
		info, ok := f.Trees[nt.Name]
		p.existed[nt.Name] = ok
		if !ok {
			p.defined = append(p.defined, nt.Name)
			continue
		}
		was := settings{start: info.Start, lag: info.LagMinutes, maxFailures: info.MaxFailures}
		ot := old[nt.Name]
		if reflect.DeepEqual(ot, nt) && was == now {
			continue
		}
		p.defined = append(p.defined, nt.Name)
		p.fields[nt.Name] = treeFields(treeFacts(ot, was), treeFacts(nt, now))
	}
	for name := range old {
		if !kept[name] {
			p.removed = append(p.removed, name)
		}
	}
	slices.Sort(p.defined)
	slices.Sort(p.removed)
	return p
}

// changes lists the trees defined and removed, as the plan saw them.
func (p *treePlan) changes(defined, removed []string) *Changes {
	c := &Changes{Added: []DefinitionRef{}, Changed: []ChangedDef{}, Deleted: []DefinitionRef{}}
	for _, name := range defined {
		if !p.existed[name] {
			c.Added = append(c.Added, DefinitionRef{Name: name, Type: TypeTree})
			continue
		}
		c.Changed = append(c.Changed, ChangedDef{Name: name, Type: TypeTree, Fields: append([]FieldChange{}, p.fields[name]...)})
	}
	for _, name := range removed {
		c.Deleted = append(c.Deleted, DefinitionRef{Name: name, Type: TypeTree})
	}
	return c
}

// settings are a tree's settings in effect.
type settings struct {
	start            periods.Key
	lag, maxFailures int
}

// settingsOf resolves a tree's settings as the forest does: its own, else
// its file's, else the defaults.
func settingsOf(file, tree periods.Settings) settings {
	s := settings{start: file.StartTimeperiod, lag: periods.DefaultLagMinutes, maxFailures: periods.DefaultMaxFailures}
	if tree.StartTimeperiod != 0 {
		s.start = tree.StartTimeperiod
	}
	for _, v := range []*int{file.LagMinutes, tree.LagMinutes} {
		if v != nil {
			s.lag = *v
		}
	}
	for _, v := range []*int{file.MaxFailures, tree.MaxFailures} {
		if v != nil {
			s.maxFailures = *v
		}
	}
	return s
}

// treeFacts lists what a tree says, as field and value: its dependencies,
// its settings in effect, and each level as the tree file writes it.
func treeFacts(t periods.Tree, s settings) [][2]string {
	facts := [][2]string{
		{"dependentOn", strings.Join(t.DependentOn, ",")},
		{"startTimeperiod", s.start.String()},
		{"lagMinutes", strconv.Itoa(s.lag)},
		{"maxFailures", strconv.Itoa(s.maxFailures)},
	}
	var levels struct {
		Trees []struct {
			Levels []json.RawMessage `json:"levels"`
		} `json:"trees"`
	}
	text := periods.Format(&periods.File{Trees: []periods.Tree{{Name: t.Name, Levels: t.Levels}}})
	if json.Unmarshal(text, &levels) != nil || len(levels.Trees) != 1 {
		return facts
	}
	for i, raw := range levels.Trees[0].Levels {
		var b bytes.Buffer
		if json.Compact(&b, raw) != nil {
			continue
		}
		facts = append(facts, [2]string{"level " + t.Levels[i].Process, b.String()})
	}
	return facts
}

// treeFields lists the facts whose values differ: those of the new tree in
// its order, then those only the old one has.
func treeFields(old, now [][2]string) []FieldChange {
	before := map[string]string{}
	for _, kv := range old {
		before[kv[0]] = kv[1]
	}
	seen := map[string]bool{}
	var out []FieldChange
	for _, kv := range now {
		seen[kv[0]] = true
		if before[kv[0]] != kv[1] {
			out = append(out, FieldChange{Field: kv[0], Old: before[kv[0]], New: kv[1]})
		}
	}
	for _, kv := range old {
		if !seen[kv[0]] && kv[1] != "" {
			out = append(out, FieldChange{Field: kv[0], Old: kv[1]})
		}
	}
	return out
}
