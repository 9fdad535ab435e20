package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gnomon-sched/gnomon/store"
)

// PruneResponse says what a pass of the pruner removed, or for a dry run
// would remove now, by kind, under the server's horizons.
type PruneResponse struct {
	DryRun bool `json:"dry_run,omitempty"`
	// At is the clock reading the horizons count back from.
	At time.Time `json:"at"`
	// Retention gives every kind's horizon, as --retention takes them.
	Retention string `json:"retention"`
	// Removed counts rows by kind: journal (data events included), runs,
	// fires, audit, alerts, node_log.
	Removed PruneCounts `json:"removed"`
}

// PruneCounts counts rows by kind.
type PruneCounts struct {
	Journal int64 `json:"journal"`
	Runs    int64 `json:"runs"`
	Fires   int64 `json:"fires"`
	Audit   int64 `json:"audit"`
	Alerts  int64 `json:"alerts"`
	NodeLog int64 `json:"node_log"`
}

// prune answers GET /api/v1/prune with what a pass would remove now, and
// POST with what a pass it runs at once removed.
func (s *Server) prune(w http.ResponseWriter, r *http.Request) error {
	dry := r.Method == http.MethodGet
	at := s.sched.Now()
	n, err := s.sched.Prune(r.Context(), dry)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, PruneResponse{DryRun: dry, At: at.In(s.loc), Retention: s.sched.Retention().String(), Removed: pruneCounts(n)})
}

func pruneCounts(n store.Pruned) PruneCounts {
	return PruneCounts{Journal: n.Journal, Runs: n.Runs, Fires: n.Fires, Audit: n.Audit, Alerts: n.Alerts, NodeLog: n.NodeLog}
}

// Prune runs a pass of the server's pruner now, or with dryRun says what
// it would remove.
func (c *Client) Prune(ctx context.Context, dryRun bool) (*PruneResponse, error) {
	var out PruneResponse
	method := http.MethodPost
	if dryRun {
		method = http.MethodGet
	}
	return &out, c.do(ctx, method, "/api/v1/prune", nil, &out)
}
