package cli

// The end-to-end tests run on one server: on SQLite by default, on
// PostgreSQL with GNOMON_TEST_DB=postgres. With GNOMON_TEST_DB=cluster
// the same tests run on a cluster of three processes on a fresh
// PostgreSQL database each: a director (gnomon server --roles director)
// and two nodes that are clocks and workers (--roles clock,worker), each
// a process of this test binary (see TestMain). The director runs no
// command itself: every run goes to a worker, and every time trigger is
// found by a clock node. A test that only one server can run says why
// with singleServer.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/job"
)

// onCluster reports whether the tests run on clusters.
func onCluster() bool { return os.Getenv("GNOMON_TEST_DB") == "cluster" }

// singleServer skips a test in the cluster pass, saying why only one
// server can run it.
func singleServer(t *testing.T, why string) {
	t.Helper()
	if onCluster() {
		t.Skip("one server only: " + why)
	}
}

// Why tests run on one server only.
const (
	killedProcess = "it kills one server's process and starts it again; cluster_test.go kills the processes of a cluster"
	ownPostgres   = "it stops a PostgreSQL of its own under one server, whatever the pass"
)

// missedDown is why an occurrence is missed while the server, or the
// whole cluster, is down: on a cluster, the clock node that takes its
// partition again finds it past the catch-up bound.
func missedDown() string {
	if onCluster() {
		return "no clock node owned the task's partition at that time"
	}
	return "the scheduler was not running at that time"
}

// clusterWorkers are the nodes of a test cluster that are clocks and
// workers, besides its director.
var clusterWorkers = []string{"w1", "w2"}

// startCluster starts the fixture's cluster as cfg configures one
// server: the director with cfg's data directory, database and API
// settings, then the clock and worker nodes, each with a data directory
// of its own. It returns once every clock node owns partitions.
func (f *fixture) startCluster(cfg ServerConfig) {
	t := f.t
	t.Helper()
	switch {
	case cfg.DB == "":
		t.Fatal("a cluster needs its database on PostgreSQL")
	case cfg.SupervisorCommand != nil || cfg.TLSCert != "" || cfg.TLSSelfSigned || cfg.TLSClientCA != "" || cfg.InsecureListen:
		t.Fatal("the cluster fixture does not pass on supervisor commands or TLS")
	}
	shared := []string{"--db", cfg.DB, "--timezone", cfg.Timezone, "--workers", strconv.Itoa(cfg.Workers),
		"--kill-grace", cfg.Grace.String(), "--shutdown-grace", "20s"}
	for _, r := range cfg.LogRoots {
		shared = append(shared, "--log-root", r)
	}
	addr := freePort(t)
	director := append([]string{"server", "--data", cfg.Data, "--listen", addr, "--roles", "director", "--node", "dir",
		"--token-rate", strconv.Itoa(cfg.TokenRate)}, shared...)
	for _, fl := range []struct {
		name, value string
		set         bool
	}{
		{"--simulate-from", cfg.SimulateFrom, cfg.SimulateFrom != ""},
		{"--definitions", cfg.Definitions, cfg.Definitions != ""},
		{"--smtp-addr", cfg.SMTP.Addr, cfg.SMTP.Addr != ""},
		{"--smtp-from", cfg.SMTP.From, cfg.SMTP.From != ""},
		{"--max-future-skew", cfg.MaxFutureSkew.String(), cfg.MaxFutureSkew != 0},
		{"--event-lateness", max(cfg.EventLateness, 0).String(), cfg.EventLateness != 0},
		{"--alert-retry-for", cfg.RetryAlertsFor.String(), cfg.RetryAlertsFor != 0},
		{"--public-name", strings.Join(cfg.PublicNames, ","), len(cfg.PublicNames) > 0},
		{"--live-streams", strconv.Itoa(cfg.LiveStreams), cfg.LiveStreams != 0},
	} {
		if fl.set {
			director = append(director, fl.name, fl.value)
		}
	}
	if cfg.MetricsPublic {
		director = append(director, "--metrics-public")
	}
	if cfg.Retention.Journal < 0 {
		director = append(director, "--retention", "journal=forever")
	}
	for _, kv := range []struct {
		kind string
		d    job.Duration
	}{{"data", cfg.Retention.Data}, {"runs", cfg.Retention.Runs}, {"fires", cfg.Retention.Fires}, {"audit", cfg.Retention.Audit},
		{"alerts", cfg.Retention.Alerts}, {"node-log", cfg.Retention.NodeLog}} {
		if kv.d != 0 {
			director = append(director, "--retention", kv.kind+"="+kv.d.Retention())
		}
	}
	first := f.cluster == nil
	f.cluster = []*clusterNode{{t: t, name: "dir", args: director, log: filepath.Join(f.dir, "dir.log")}}
	for _, name := range clusterWorkers {
		args := append([]string{"server", "--data", filepath.Join(f.dir, name), "--listen", freePort(t), "--roles", "clock,worker",
			"--node", name}, shared...)
		if cfg.SimulateFrom != "" {
			args = append(args, "--simulated")
		}
		f.cluster = append(f.cluster, &clusterNode{t: t, name: name, args: args, log: filepath.Join(f.dir, name+".log")})
	}
	if first {
		t.Cleanup(func() {
			if t.Failed() {
				for _, name := range append([]string{"dir"}, clusterWorkers...) {
					b, _ := os.ReadFile(filepath.Join(f.dir, name+".log"))
					t.Logf("log of %s:\n%s", name, tail(string(b), 200))
				}
			}
		})
	}
	// The director first: it migrates the database and takes the
	// cluster; then the nodes, together.
	f.startNode(f.cluster[0])
	f.client = &api.Client{Base: "http://" + addr, Token: adminToken(t, cfg.Data)}
	testTokens.Store(f.client.Base, f.client.Token)
	for _, n := range f.cluster[1:] {
		n.start()
	}
	for _, n := range f.cluster[1:] {
		f.startNode(n)
	}
	f.waitFor("every clock node owns partitions", func() bool {
		st, err := f.client.Cluster(context.Background())
		if err != nil {
			return false
		}
		owners := 0
		for _, n := range st.Nodes {
			if n.State == cluster.Live && n.Has(cluster.RoleClock) && len(n.Partitions) > 0 {
				owners++
			}
		}
		return owners == len(clusterWorkers)
	})
}

// startNode starts a node of the fixture's cluster, unless it is running,
// and waits until it answers.
func (f *fixture) startNode(n *clusterNode) {
	f.t.Helper()
	if n.cmd == nil {
		n.start()
	}
	h := &api.Client{Base: "http://" + n.args[slices.Index(n.args, "--listen")+1]}
	// A node is ready in seconds; a director migrating a fresh database on
	// a PostgreSQL busy with other tests' databases, on a loaded machine,
	// was seen to take over a minute.
	deadline := time.Now().Add(3 * time.Minute)
	for h.Health(context.Background()) != nil {
		select {
		case <-n.done:
			b, _ := os.ReadFile(n.log)
			f.t.Fatalf("node %s exited:\n%s", n.name, tail(string(b), 50))
		default:
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("node %s did not become ready", n.name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stopCluster stops the director, then the other nodes, each with
// SIGTERM; a process that does not exit within two minutes is killed,
// and the test fails. A node drains its runs for its shutdown grace (20 s)
// at most, and exits in seconds after; the rest of the two minutes is for
// a loaded machine, on which 30 s was seen not to be enough.
func (f *fixture) stopCluster() {
	nodes := f.cluster
	const grace = 2 * time.Minute
	if !nodes[0].stop(grace) {
		f.t.Errorf("the director did not stop within %s", grace)
	}
	var wg sync.WaitGroup
	for _, n := range nodes[1:] {
		wg.Go(func() {
			if !n.stop(grace) {
				f.t.Errorf("node %s did not stop within %s", n.name, grace)
			}
		})
	}
	wg.Wait()
	f.cluster = nodes[:0:0] // stopped: stop again does nothing, start starts afresh
}

// store returns the store as the test reads it: the server's, or the
// cluster's database opened for the test.
func (f *fixture) store() gnomon.Store {
	f.t.Helper()
	if f.srv != nil {
		return f.srv.Scheduler().Store()
	}
	if f.st == nil {
		data := filepath.Join(f.dir, "data")
		st, err := gnomon.OpenStore(context.Background(), testDB(f.t, data), data)
		if err != nil {
			f.t.Fatal(err)
		}
		f.st = st
	}
	return f.st
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], "\n")
}
