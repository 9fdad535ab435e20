package web

import (
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/cluster"
)

// clusterData is the cluster page: the director and its standbys, each
// node with its health, the partitions' owners and load, the recent
// moves, and the runs the workers hold.
type clusterData struct {
	Status   cluster.Status
	Director cluster.Director
	Standbys []string
	Nodes    []clusterNode
	// Heaviest is the most fires a partition recorded in the hour, for
	// the bars of the partitions' load.
	Heaviest int
	Moves    []cluster.MoveRecord
	Workers  []workerRuns
}

// clusterNode is a node as the page shows it: Silent is how long since
// its last heartbeat, Late when that passed half the node timeout (it
// is found dead at the timeout).
type clusterNode struct {
	cluster.Node
	Silent time.Duration
	Late   bool
	Fires  int
}

type workerRuns struct {
	Node string
	Runs int
}

func (u *UI) clusterPage(r *http.Request) (string, any, error) {
	if u.cfg.Cluster == nil {
		return "", nil, notFound("this server is not a node of a cluster (start it with --roles on PostgreSQL)")
	}
	st, err := u.cfg.Cluster.Status(r.Context())
	if err != nil {
		return "", nil, err
	}
	// Heartbeats are on the system's clock, whatever the scheduler's.
	now := clock.Wall.Now()
	d := clusterData{Status: st, Director: st.Director}
	d.Director.Expires = u.local(d.Director.Expires)
	for _, n := range st.Nodes {
		cn := clusterNode{Node: n, Fires: st.FiresByNode[n.ID]}
		cn.Started, cn.Heartbeat, cn.Ended = u.local(n.Started), u.local(n.Heartbeat), u.local(n.Ended)
		if n.State == cluster.Live || n.State == cluster.Draining {
			cn.Silent = max(now.Sub(n.Heartbeat), 0).Round(time.Millisecond)
			cn.Late = cn.Silent > time.Duration(st.Timeout)/2
			if n.Has(cluster.RoleDirector) && n.ID != st.Director.ID {
				d.Standbys = append(d.Standbys, n.ID)
			}
		}
		d.Nodes = append(d.Nodes, cn)
	}
	for _, p := range st.Partitions {
		d.Heaviest = max(d.Heaviest, p.Fires)
	}
	d.Moves = slices.Clone(st.Moves) // newest first
	for i := range d.Moves {
		d.Moves[i].At = u.local(d.Moves[i].At)
	}
	for _, node := range slices.Sorted(maps.Keys(st.Runs.Held)) {
		d.Workers = append(d.Workers, workerRuns{Node: node, Runs: st.Runs.Held[node]})
	}
	for i := range d.Status.Runs.Waiting {
		d.Status.Runs.Waiting[i].Since = u.local(d.Status.Runs.Waiting[i].Since)
	}
	return "Cluster", d, nil
}
