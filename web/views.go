package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"time"

	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/periods"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

// dataData is the data-event page: each configuration with what its
// dependencies' windows hold, and the events received last.
type dataData struct {
	Configs  []configView
	Received []scheduler.Received
}

type configView struct {
	Row      taskRow
	LastExec time.Time
	Deps     []depView
}

type depView struct {
	engine.Stored
	Life time.Duration
	// Expires is when the oldest event held stops counting.
	Expires time.Time
}

// dataRows bounds the configurations and events the data page lists.
const dataRows = 200

func (u *UI) data(r *http.Request) (string, any, error) {
	var d dataData
	u.cfg.Scheduler.View().Ascend("", func(it *scheduler.TaskItem) bool {
		def, st := it.Def, it.State
		if def.Type != job.Configuration {
			return true
		}
		cv := configView{Row: u.row(*def, st), LastExec: u.local(st.LastExec.Time())}
		for i, s := range it.Stored {
			life := time.Duration(def.Extras().Deps[i].Life) * time.Second
			dv := depView{Stored: s, Life: life}
			if s.Count > 0 {
				dv.Oldest, dv.Newest, dv.Expires = u.local(s.Oldest), u.local(s.Newest), u.local(s.Oldest.Add(life))
			}
			cv.Deps = append(cv.Deps, dv)
		}
		d.Configs = append(d.Configs, cv)
		return len(d.Configs) < dataRows
	})
	var err error
	if d.Received, err = scheduler.ReceivedEvents(r.Context(), u.cfg.Scheduler.Store(), "", 50, 10_000); err != nil {
		return "", nil, err
	}
	for i := range d.Received {
		d.Received[i].At = u.local(d.Received[i].At)
	}
	return "Data events", d, nil
}

// graphData is the graph page: the elements come from graph.json.
type graphData struct {
	Task  string
	Depth int
	// Filter chooses the tasks the graph starts from when no task does.
	Filter tlFilter
	// Statuses are those the filter offers.
	Statuses []string
	// Src is the address of the elements.
	Src string
}

func (u *UI) graph(r *http.Request) (string, any, error) {
	d, err := graphParams(r)
	if err != nil {
		return "", nil, err
	}
	for s := job.Idle; s <= job.Frozen; s++ {
		if s != job.Staged && s != job.Queued {
			d.Statuses = append(d.Statuses, s.String())
		}
	}
	v := d.Filter.values()
	v.Set("depth", strconv.Itoa(d.Depth))
	if d.Task != "" {
		v.Set("task", d.Task)
	}
	d.Src = "/graph.json?" + v.Encode()
	if d.Task != "" {
		return "Graph around " + d.Task, d, nil
	}
	return "Graph", d, nil
}

// graphParams reads the task a graph is centred on, or the filter that
// chooses the tasks it starts from, and how many steps it goes from them
// (2 from a task, 0 from a filter unless asked).
func graphParams(r *http.Request) (graphData, error) {
	q := r.URL.Query()
	d := graphData{Task: q.Get("task"), Depth: 2, Filter: tlFilter{Q: q.Get("q"), Label: q.Get("label"), Bundle: q.Get("bundle"), Status: q.Get("status")}}
	if d.Task == "" {
		d.Depth = 0
	}
	if v := q.Get("depth"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 10 {
			return d, badRequest("depth must be a whole number from 0 to 10, got %q", v)
		}
		d.Depth = n
	}
	if d.Filter.Status != "" {
		if _, err := job.ParseStatus(d.Filter.Status); err != nil {
			return d, badRequest("status: %v", err)
		}
	}
	if _, err := path.Match(d.Filter.Q, ""); err != nil {
		return d, badRequest("q: %q is not a name pattern (* any characters, ? one, [a-z] one of a set): %v", d.Filter.Q, err)
	}
	return d, nil
}

// element is a node or edge for the graph library (cytoscape.js).
type element struct {
	Group string      `json:"group"`
	Data  elementData `json:"data"`
}

type elementData struct {
	ID     string `json:"id"`
	Label  string `json:"label,omitempty"`
	Status string `json:"status,omitempty"`
	Type   string `json:"type,omitempty"`
	Source string `json:"source,omitempty"`
	Target string `json:"target,omitempty"`
	Kind   string `json:"kind,omitempty"` // of an edge: condition, bundle
	Centre bool   `json:"centre,omitempty"`
}

// graphAnswer is graph.json: the elements drawn, and what was left out.
type graphAnswer struct {
	Elements []element `json:"elements"`
	// Tasks is how many tasks the graph would hold, Drawn how many it
	// holds: the nearest to where it starts, first.
	Tasks int `json:"tasks"`
	Drawn int `json:"drawn"`
	// Truncated says that Tasks - Drawn tasks were left out.
	Truncated bool `json:"truncated"`
	// Choose says that the graph starts from no task and no filter and
	// there are more than maxGraph tasks: the page asks for one.
	Choose bool `json:"choose,omitempty"`
}

// maxGraph bounds the tasks one graph draws.
const maxGraph = 400

// graphJSON answers the elements of the graph: the tasks a filter
// chooses, or one task, and those within depth steps of them, up- and
// downstream along conditions and bundles, the nearest first, at most
// maxGraph, saying how many it left out. With neither a task nor a filter
// it is the whole graph, when it has at most maxGraph tasks.
func (u *UI) graphJSON(w http.ResponseWriter, r *http.Request) error {
	g, err := graphParams(r)
	if err != nil {
		return err
	}
	var status job.Status
	if g.Filter.Status != "" {
		status, _ = job.ParseStatus(g.Filter.Status)
	}
	type edge struct{ from, to, kind string }
	var (
		seeds []string
		total int
	)
	v := u.cfg.Scheduler.View()
	up := map[string][]edge{} // edges into a task
	down := map[string][]edge{}
	add := func(ed edge) {
		down[ed.from] = append(down[ed.from], ed)
		up[ed.to] = append(up[ed.to], ed)
	}
	v.Ascend("", func(it *scheduler.TaskItem) bool {
		def, name := it.Def, it.Def.Name
		if def.Type == job.Group {
			return true
		}
		total++
		if def.Parent != "" {
			add(edge{def.Parent, name, "bundle"})
		}
		if def.Condition != "" {
			if x, err := cond.Parse(def.Condition); err == nil {
				for _, n := range x.Names() {
					add(edge{n, name, "condition"})
				}
			}
		}
		if g.Task == "" && g.Filter.matches(it, status) {
			seeds = append(seeds, name)
		}
		return true
	})
	if g.Task != "" {
		if _, _, ok := v.Task(g.Task); !ok {
			return notFound("task %s not found", g.Task)
		}
		seeds = []string{g.Task}
	}
	ans := graphAnswer{Elements: []element{}}
	if g.Task == "" && g.Filter == (tlFilter{}) && total > maxGraph {
		ans.Choose, ans.Tasks = true, total
		return writeGraph(w, ans)
	}
	// Breadth first from the seeds, both ways: every task within depth
	// steps, in the order reached.
	order := slices.Clone(seeds)
	seen := map[string]bool{}
	for _, s := range seeds {
		seen[s] = true
	}
	frontier := seeds
	for range g.Depth {
		var more []string
		for _, n := range frontier {
			for _, ed := range up[n] {
				if !seen[ed.from] {
					seen[ed.from] = true
					more = append(more, ed.from)
				}
			}
			for _, ed := range down[n] {
				if !seen[ed.to] {
					seen[ed.to] = true
					more = append(more, ed.to)
				}
			}
		}
		order, frontier = append(order, more...), more
	}
	ans.Tasks = len(order)
	if len(order) > maxGraph {
		order, ans.Truncated = order[:maxGraph], true
	}
	ans.Drawn = len(order)
	nodes := map[string]bool{}
	for _, n := range order {
		nodes[n] = true
	}
	slices.Sort(order)
	var edges []element
	for _, name := range order {
		def, st, ok := v.Task(name)
		typ, st8 := "unknown", "unknown"
		if ok {
			typ, st8 = string(def.Type), st.Status.String()
		}
		ans.Elements = append(ans.Elements, element{Group: "nodes", Data: elementData{ID: name, Label: name, Status: st8, Type: typ, Centre: name == g.Task}})
		for _, ed := range down[name] {
			if nodes[ed.to] {
				edges = append(edges, element{Group: "edges", Data: elementData{ID: ed.kind + ":" + ed.from + ">" + ed.to, Source: ed.from, Target: ed.to, Kind: ed.kind}})
			}
		}
	}
	ans.Elements = append(ans.Elements, edges...)
	return writeGraph(w, ans)
}

func writeGraph(w http.ResponseWriter, ans graphAnswer) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(ans)
}

// treesData lists the timeperiod trees.
type treesData struct {
	Trees []periods.TreeInfo
}

func (u *UI) trees(r *http.Request) (string, any, error) {
	var d treesData
	var err error
	if d.Trees, err = u.cfg.Scheduler.TreeList(r.Context()); err != nil {
		return "", nil, err
	}
	return "Timeperiod trees", d, nil
}

// treeData is one tree's grid: a row per level, a cell per period.
type treeData struct {
	Tree  periods.TreeInfo
	Grid  []gridRow
	Cells int
}

type gridRow struct {
	Level periods.LevelInfo
	Nodes []periods.Node
}

// gridCells is how many of a level's latest periods the grid shows.
const gridCells = 48

func (u *UI) tree(r *http.Request) (string, any, error) {
	name := r.PathValue("name")
	var d treeData
	tree, nodes, found, err := u.cfg.Scheduler.TreeGrid(r.Context(), name, gridCells)
	if err != nil {
		return "", nil, err
	}
	if !found {
		return "", nil, notFound("tree %s not found", name)
	}
	d.Tree = tree
	for i, lv := range tree.Levels {
		d.Grid = append(d.Grid, gridRow{Level: lv, Nodes: nodes[i]})
	}
	return "Tree " + name, d, nil
}

// historyRows is the length of the pages of runs, alerts and the audit.
const historyRows = 100

type alertsData struct {
	Alerts []job.Alert
	Task   string
	Next   int64
}

func (u *UI) alerts(r *http.Request) (string, any, error) {
	d := alertsData{Task: r.URL.Query().Get("task")}
	q := store.AlertQuery{Task: d.Task, Limit: historyRows + 1}
	if v := r.URL.Query().Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return "", nil, badRequest("before must be an alert ID, got %q", v)
		}
		q.Before = n
	}
	list, err := u.cfg.Scheduler.Store().Alerts(r.Context(), q)
	if err != nil {
		return "", nil, err
	}
	if len(list) > historyRows {
		list = list[:historyRows]
		d.Next = list[historyRows-1].ID
	}
	for _, a := range list {
		a.Created = u.local(a.Created)
		d.Alerts = append(d.Alerts, a)
	}
	return "Alerts", d, nil
}

// auditData is a page of the audit, newest first.
type auditData struct {
	Records  []job.AuditRecord
	Filter   auditFilter
	Statuses []job.Status
	// Newer and Older link to the pages before and after this one, ""
	// at either end; First to the newest page.
	Newer, Older, First string
	// Scope names the scope of the viewer's token, which the records are
	// limited to; "" for every task.
	Scope string
}

// auditFilter is the filter of the audit page, as the URL gives it. From
// and To are days (2006-01-02) in the server's zone, both included: the
// records of the runs that stopped in them.
type auditFilter struct{ Task, Status, From, To string }

func (f auditFilter) values() url.Values {
	return params("task", f.Task, "status", f.Status, "from", f.From, "to", f.To)
}

// audit shows the audit records newest first, a page of historyRows, paged
// both ways by the record that ends (older) or begins (newer) the page.
func (u *UI) audit(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	f := auditFilter{Task: q.Get("task"), Status: q.Get("status"), From: q.Get("from"), To: q.Get("to")}
	d := auditData{Filter: f, Statuses: runStatuses[1:], First: "/audit?" + f.values().Encode()}
	aq := store.AuditQuery{Task: f.Task, Limit: historyRows + 1}
	if f.Status != "" {
		s, err := job.ParseStatus(f.Status)
		if err != nil || !slices.Contains(d.Statuses, s) {
			return "", nil, badRequest("status: %q is not a status a run ends in: give success, failure or aborted", f.Status)
		}
		aq.Statuses = []job.Status{s}
	}
	var err error
	if aq.From, err = u.day("from", f.From, 0); err != nil {
		return "", nil, err
	}
	if aq.To, err = u.day("to", f.To, 1); err != nil {
		return "", nil, err
	}
	if !aq.From.IsZero() && !aq.To.IsZero() && !aq.From.Before(aq.To) {
		return "", nil, badRequest("from %s is after to %s: give the first day, then the last", f.From, f.To)
	}
	for _, c := range []struct {
		param string
		to    *int64
	}{{"older", &aq.Before}, {"newer", &aq.After}} {
		if v := q.Get(c.param); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return "", nil, badRequest("%s: %q is not a record number", c.param, v)
			}
			*c.to = n
		}
	}
	if aq.Before > 0 && aq.After > 0 {
		return "", nil, badRequest("give older or newer, not both")
	}
	if scope := scopeOf(r); len(scope) > 0 {
		// The records of the tasks the scope covers.
		d.Scope = scopeLine(scope)
		v := u.cfg.Scheduler.View()
		if f.Task == "" {
			aq.Tasks = scopedTasks(v, scope)
		} else if covers(v, scope, f.Task) {
			aq.Tasks = []string{f.Task}
		}
		if len(aq.Tasks) == 0 {
			return "Audit", d, nil
		}
	}
	list, err := u.cfg.Scheduler.Store().AuditPage(r.Context(), aq)
	if err != nil {
		return "", nil, err
	}
	list, d.Older, d.Newer = historyPage(list, aq.After > 0, aq.Before > 0, "/audit", f.values(), func(a job.AuditRecord) int64 { return a.Seq })
	for _, a := range list {
		a.Launch, a.Stop = u.local(a.Launch), u.local(a.Stop)
		d.Records = append(d.Records, a)
	}
	return "Audit", d, nil
}
