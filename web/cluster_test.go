package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/cluster"
)

// staticCluster is a cluster whose status is given: the page's own test
// of what it draws (cli.TestClusterFlows reads the page of a real one).
type staticCluster struct{ st cluster.Status }

func (c staticCluster) Status(context.Context) (cluster.Status, error) { return c.st, nil }
func (c staticCluster) Drain(context.Context, string) error            { return nil }

func TestClusterPage(t *testing.T) {
	t.Parallel()
	_, u := startScheduler(t, "insert_task: a\ntype: callable\nfunction: log\n")
	now := time.Now() // heartbeats are on the system's clock
	u.cfg.Cluster = staticCluster{cluster.Status{
		Director: cluster.Director{ID: "d1", Epoch: 4, Expires: now.Add(time.Second)},
		Timeout:  cluster.Duration(time.Hour),
		Nodes: []cluster.Node{
			{ID: "d1", Roles: []string{"director"}, State: cluster.Live, Heartbeat: now.Add(-time.Second)},
			{ID: "d2", Roles: []string{"director", "clock"}, State: cluster.Live, Heartbeat: now.Add(-40 * time.Minute), Partitions: []int{0, 1}},
			{ID: "w1", Roles: []string{"worker"}, State: cluster.Dead, Heartbeat: now.Add(-time.Minute), Ended: now.Add(-50 * time.Second)},
		},
		Partitions:  []cluster.Load{{Partition: 0, Node: "d2", Fires: 30}, {Partition: 1, Node: "d2", Fires: 10}, {Partition: 2}},
		FiresByNode: map[string]int{"d2": 40},
		Runs:        cluster.Runs{Queued: 3, Held: map[string]int{"w1": 2}, Waiting: []cluster.Waiting{{Run: 7, Task: "a", Machine: "m9", Since: now}}},
		Moves:       []cluster.MoveRecord{{Move: cluster.Move{Partition: 1, From: "w0", To: "d2"}, Reason: "w0 dead"}},
	}}
	_, data, err := u.clusterPage(httptest.NewRequest(http.MethodGet, "/cluster", nil))
	if err != nil {
		t.Fatal(err)
	}
	d := data.(clusterData)
	if strings.Join(d.Standbys, ",") != "d2" || d.Heaviest != 30 || len(d.Workers) != 1 || d.Workers[0] != (workerRuns{"w1", 2}) {
		t.Errorf("standbys %v, heaviest %d, workers %v", d.Standbys, d.Heaviest, d.Workers)
	}
	byID := map[string]clusterNode{}
	for _, n := range d.Nodes {
		byID[n.ID] = n
	}
	if n := byID["d1"]; n.Late || n.Silent < time.Second {
		t.Errorf("d1, heard a second ago: %+v", n)
	}
	if n := byID["d2"]; !n.Late || n.Fires != 40 {
		t.Errorf("d2, heard 40 minutes ago with an hour's timeout, is not late: %+v", n)
	}
	if n := byID["w1"]; n.Late || n.Silent != 0 {
		t.Errorf("w1, dead, is counted as silent: %+v", n)
	}

	// The page draws it.
	w := httptest.NewRecorder()
	u.pageHandler("cluster", u.clusterPage)(w, httptest.NewRequest(http.MethodGet, "/cluster", nil))
	body := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("the page is answered %d: %s", w.Code, body)
	}
	for _, want := range []string{"d1 <strong>(director)</strong>", "<dd>d2</dd>", `<strong class="error">late</strong>`, "ended ", "w0 dead",
		">m9<", "3 queued for a worker; w1 holds 2."} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not show %q", want)
		}
	}

	// Without a cluster there is no page.
	u.cfg.Cluster = nil
	if _, _, err := u.clusterPage(httptest.NewRequest(http.MethodGet, "/cluster", nil)); err == nil || !strings.Contains(err.Error(), "not a node of a cluster") {
		t.Errorf("without a cluster: %v", err)
	}
}
