package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/gnomon-sched/gnomon/internal/pgtest"
)

// TestNoopPG checks that the PostgreSQL baseline answers 202 only for
// events it committed: after the load, its journal table holds exactly
// one entry per accepted request, each the event and when it came.
func TestNoopPG(t *testing.T) {
	url := pgtest.URL(t)
	s, err := StartNoopPG("127.0.0.1:0", url)
	if err != nil {
		t.Fatal(err)
	}
	r := Post(context.Background(), s.URL, 8, 300*time.Millisecond, http.StatusAccepted, func(i int64) []byte { return EventBody(i, 3) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if r.Requests == 0 || r.Errors != 0 {
		t.Fatalf("against the PostgreSQL baseline: %+v", r)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n, last int
	var body string
	if err := conn.QueryRow(ctx, `SELECT count(*), max(seq), min(body) FROM journal`).Scan(&n, &last, &body); err != nil {
		t.Fatal(err)
	}
	if n != r.Requests || last != n {
		t.Errorf("%d requests accepted, %d rows numbered up to %d", r.Requests, n, last)
	}
	var e struct {
		Type     string    `json:"type"`
		Received time.Time `json:"received"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Type == "" || e.Received.IsZero() {
		t.Errorf("journal body %s: %+v, %v", body, e, err)
	}
}

// TestCreateDatabase checks that a benchmark's database is its own and is
// gone after Drop.
func TestCreateDatabase(t *testing.T) {
	pgtest.URL(t) // skips when no server answers
	ctx := context.Background()
	a, err := CreateDatabase(ctx, pgtest.Base())
	if err != nil {
		t.Fatal(err)
	}
	b, err := CreateDatabase(ctx, pgtest.Base())
	if err != nil {
		a.Drop()
		t.Fatal(err)
	}
	if a.Name == b.Name {
		t.Errorf("two databases named %s", a.Name)
	}
	pool, err := pgxpool.New(ctx, a.WithParam("pool_max_conns", "1"))
	if err != nil {
		t.Errorf("connect to %s: %v", a.Name, err)
	} else {
		var name string
		if err := pool.QueryRow(ctx, `SELECT current_database()`).Scan(&name); err != nil || name != a.Name {
			t.Errorf("connected to %q (%v), want %s", name, err, a.Name)
		}
		pool.Close()
	}
	for _, d := range []*Database{a, b} {
		if err := d.Drop(); err != nil {
			t.Error(err)
		}
	}
	admin, err := pgx.Connect(ctx, pgtest.Base())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var left int
	if err := admin.QueryRow(ctx, `SELECT count(*) FROM pg_database WHERE datname = ANY($1)`, []string{a.Name, b.Name}).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d of the databases left after Drop (%v)", left, err)
	}
}
