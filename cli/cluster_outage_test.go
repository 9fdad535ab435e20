package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
	"github.com/gnomon-sched/gnomon/job"
)

// TestClusterPostgresRestart stops a cluster's PostgreSQL for three times
// the node timeout, three ways (a fast shutdown, an immediate one, and a
// SIGKILL of the postmaster, which then recovers from its WAL), each time
// with a run in flight on a worker. The database's silence is no node's: no node is
// found dead, each run ends as its command did, every process keeps
// running, and each occurrence of the every-second task is handled once.
func TestClusterPostgresRestart(t *testing.T) {
	skipOnOtherStores(t)
	pg := pgtest.Start(t)
	db := pg.URL()
	c, nodes := startNodesOn(t, db,
		nodeSpec{name: "dir", roles: "director,worker"},
		nodeSpec{name: "w1", roles: "clock,worker", machines: "m1"})
	ctx := context.Background()
	out := t.TempDir()
	started := filepath.Join(out, "slow.started")
	defs := tickDef + fmt.Sprintf(`
insert_task: slow
type: callable
machine: m1
command: echo started >> %[1]s; sleep 5
out_log_file: %[2]s/slow.out
err_log_file: %[2]s/slow.err
`, started, out)
	if _, err := c.Define(ctx, "outage.def", defs, false); err != nil {
		t.Fatal(err)
	}
	const down = 3 * time.Second // the node timeout is 1 s
	for i, outage := range []struct {
		name string
		do   func()
	}{
		{"pg_ctl restart -m fast", func() { pg.Restart("fast", down) }},
		{"pg_ctl restart -m immediate", func() { pg.Restart("immediate", down) }},
		{"SIGKILL of the postmaster", func() { pg.Kill(down) }},
	} {
		if err := c.Event(ctx, "slow", "start"); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, "slow started on w1", func() bool {
			b, _ := os.ReadFile(started)
			return bytes.Count(b, []byte("\n")) == i+1
		})
		outage.do() // returns once PostgreSQL takes connections again
		var last job.Run
		waitUntil(t, "slow ended after the "+outage.name, func() bool {
			rs, err := c.Runs(ctx, "slow", 1, "")
			if err != nil || len(rs.Runs) == 0 {
				return false // the director may still be reconnecting
			}
			last = rs.Runs[0].Run
			return last.Status != job.Running
		})
		if last.Status != job.Success {
			t.Errorf("after a %s: slow's run %d ended %s (%s): %s", outage.name, last.ID, last.Status, last.Result, last.Message)
		}
	}
	back := time.Now() // PostgreSQL has been up since the last outage
	for name, n := range nodes {
		select {
		case <-n.done:
			b, _ := os.ReadFile(n.log)
			t.Errorf("node %s exited; its log ends:\n%s", name, tail(string(b), 30))
		default:
		}
	}
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var gone []string
	rows, err := conn.Query(ctx, `SELECT body FROM journal WHERE kind = 'node_gone' ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	if gone, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
		t.Fatal(err)
	}
	if len(gone) > 0 {
		t.Errorf("nodes found gone while the database was down: %v", gone)
	}
	waitTicked(t, c, back) // tick fires again
	checkFencing(t, db, c)
}
