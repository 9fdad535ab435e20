package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestInstance checks that a committed row survives each way of stopping
// the server, and that the server comes back every time.
func TestInstance(t *testing.T) {
	t.Parallel()
	i := Start(t)
	ctx := context.Background()
	exec := func(sql string, args ...any) {
		t.Helper()
		conn, err := pgx.Connect(ctx, i.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	count := func() int {
		t.Helper()
		conn, err := pgx.Connect(ctx, i.URL())
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	exec("CREATE TABLE t (n int)")
	for n, stop := range []func(){
		func() { i.Restart("fast", 0) },
		func() { i.Restart("immediate", 0) },
		func() { i.Kill(0) },
	} {
		exec("INSERT INTO t VALUES ($1)", n)
		stop()
		if got := count(); got != n+1 {
			t.Fatalf("after stop %d: %d rows, want %d", n, got, n+1)
		}
	}
}
