package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
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
}

func (u *UI) graph(r *http.Request) (string, any, error) {
	d, err := graphParams(r)
	if err != nil {
		return "", nil, err
	}
	if d.Task != "" {
		return "Graph around " + d.Task, d, nil
	}
	return "Graph", d, nil
}

// graphParams reads the task a graph is centred on and its depth.
func graphParams(r *http.Request) (graphData, error) {
	d := graphData{Task: r.URL.Query().Get("task"), Depth: 2}
	if v := r.URL.Query().Get("depth"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10 {
			return d, badRequest("depth must be a whole number from 1 to 10, got %q", v)
		}
		d.Depth = n
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

// maxGraph bounds the tasks one graph shows.
const maxGraph = 400

// graphJSON answers the elements of the graph: every task's conditions
// and bundles, or those within depth steps of one task, up- and
// downstream.
func (u *UI) graphJSON(w http.ResponseWriter, r *http.Request) error {
	g, err := graphParams(r)
	if err != nil {
		return err
	}
	type edge struct{ from, to, kind string }
	var (
		nodes   = map[string]bool{}
		edges   []edge
		missing bool
		out     []element
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
		if g.Task == "" && len(nodes) < maxGraph {
			nodes[name] = true
		}
		return true
	})
	if g.Task != "" {
		if _, _, ok := v.Task(g.Task); !ok {
			missing = true
		}
		walk := func(next map[string][]edge, far func(edge) string) {
			frontier := []string{g.Task}
			for range g.Depth {
				var more []string
				for _, n := range frontier {
					for _, ed := range next[n] {
						if f := far(ed); !nodes[f] && len(nodes) < maxGraph {
							nodes[f] = true
							more = append(more, f)
						}
					}
				}
				frontier = more
			}
		}
		nodes[g.Task] = true
		walk(up, func(ed edge) string { return ed.from })
		walk(down, func(ed edge) string { return ed.to })
	}
	for name := range nodes {
		def, st, ok := v.Task(name)
		typ, status := "unknown", "unknown"
		if ok {
			typ, status = string(def.Type), st.Status.String()
		}
		out = append(out, element{Group: "nodes", Data: elementData{ID: name, Label: name, Status: status, Type: typ, Centre: name == g.Task}})
		for _, ed := range down[name] {
			if nodes[ed.to] {
				edges = append(edges, ed)
			}
		}
	}
	if missing {
		return notFound("task %s not found", g.Task)
	}
	slices.SortFunc(out, func(a, b element) int { return strings.Compare(a.Data.ID, b.Data.ID) })
	for _, ed := range edges {
		out = append(out, element{Group: "edges", Data: elementData{ID: ed.kind + ":" + ed.from + ">" + ed.to, Source: ed.from, Target: ed.to, Kind: ed.kind}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	return json.NewEncoder(w).Encode(map[string]any{"elements": out, "truncated": len(nodes) >= maxGraph})
}

// treesData lists the timeperiod trees.
type treesData struct {
	Trees []periods.TreeInfo
}

func (u *UI) trees(r *http.Request) (string, any, error) {
	var d treesData
	if err := u.cfg.Scheduler.ReadTrees(r.Context(), func(f *periods.Forest, _ *engine.Engine) { d.Trees = f.Trees() }); err != nil {
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
	var (
		d     treeData
		found bool
		ferr  error
	)
	err := u.cfg.Scheduler.ReadTrees(r.Context(), func(f *periods.Forest, _ *engine.Engine) {
		if d.Tree, found = f.Tree(name); !found {
			return
		}
		for _, lv := range d.Tree.Levels {
			nodes, err := f.Nodes(lv.Process, 0, 0)
			if err != nil {
				ferr = err
				return
			}
			d.Grid = append(d.Grid, gridRow{Level: lv, Nodes: nodes[max(0, len(nodes)-gridCells):]})
		}
	})
	if err != nil {
		return "", nil, err
	}
	if !found {
		return "", nil, notFound("tree %s not found", name)
	}
	if ferr != nil {
		return "", nil, ferr
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
}

type auditFilter struct{ Task, Status string }

func (f auditFilter) values() url.Values {
	v := url.Values{}
	if f.Task != "" {
		v.Set("task", f.Task)
	}
	if f.Status != "" {
		v.Set("status", f.Status)
	}
	return v
}

// audit shows the audit records newest first, a page of historyRows, paged
// both ways by the record that ends (older) or begins (newer) the page.
func (u *UI) audit(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	f := auditFilter{Task: q.Get("task"), Status: q.Get("status")}
	d := auditData{Filter: f, Statuses: runStatuses[1:], First: "/audit?" + f.values().Encode()}
	aq := store.AuditQuery{Task: f.Task, Limit: historyRows + 1}
	if f.Status != "" {
		s, err := job.ParseStatus(f.Status)
		if err != nil || !slices.Contains(d.Statuses, s) {
			return "", nil, badRequest("status: %q is not a status a run ends in: give success, failure or aborted", f.Status)
		}
		aq.Statuses = []job.Status{s}
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
	list, err := u.cfg.Scheduler.Store().AuditPage(r.Context(), aq)
	if err != nil {
		return "", nil, err
	}
	more := len(list) > historyRows
	if more {
		if aq.After > 0 {
			list = list[1:]
		} else {
			list = list[:historyRows]
		}
	}
	link := func(param string, seq int64) string {
		p := f.values()
		p.Set(param, strconv.FormatInt(seq, 10))
		return "/audit?" + p.Encode()
	}
	if len(list) > 0 {
		if aq.After == 0 && more || aq.After > 0 {
			d.Older = link("older", list[len(list)-1].Seq)
		}
		if aq.Before > 0 || aq.After > 0 && more {
			d.Newer = link("newer", list[0].Seq)
		}
	}
	for _, a := range list {
		a.Launch, a.Stop = u.local(a.Launch), u.local(a.Stop)
		d.Records = append(d.Records, a)
	}
	return "Audit", d, nil
}
