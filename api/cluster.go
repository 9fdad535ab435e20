package api

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/gnomon-sched/gnomon/cluster"
)

// Cluster is the cluster a director belongs to, as the API shows and
// operates it.
type Cluster interface {
	// Status returns the nodes, moves and load of the cluster.
	Status(ctx context.Context) (cluster.Status, error)
	// Drain makes a node hand its partitions over and leave.
	Drain(ctx context.Context, node string) error
}

// clusterOf returns the server's cluster, or a 404 that says the server is
// not in one.
func (s *Server) clusterOf() (Cluster, error) {
	if s.Cluster == nil {
		return nil, &Error{Status: http.StatusNotFound, Message: "this server is not a node of a cluster (start it with --roles on PostgreSQL)"}
	}
	return s.Cluster, nil
}

func (s *Server) clusterStatus(w http.ResponseWriter, r *http.Request) error {
	c, err := s.clusterOf()
	if err != nil {
		return err
	}
	st, err := c.Status(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

func (s *Server) clusterDrain(w http.ResponseWriter, r *http.Request) error {
	c, err := s.clusterOf()
	if err != nil {
		return err
	}
	node := r.PathValue("node")
	if err := c.Drain(r.Context(), node); errors.Is(err, cluster.ErrNotRegistered) {
		return &Error{Status: http.StatusNotFound, Message: "node " + node + " is not a live node of the cluster"}
	} else if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"node": node, "state": cluster.Draining})
}

// Cluster returns the status of the server's cluster.
func (c *Client) Cluster(ctx context.Context) (*cluster.Status, error) {
	var v cluster.Status
	return &v, c.do(ctx, http.MethodGet, "/api/v1/cluster", nil, &v)
}

// Drain makes a node of the cluster hand its partitions over and leave.
func (c *Client) Drain(ctx context.Context, node string) error {
	return c.do(ctx, http.MethodPost, "/api/v1/cluster/nodes/"+url.PathEscape(node)+"/drain", nil, nil)
}
