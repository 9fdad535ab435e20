package cluster

import (
	"errors"
	"time"
)

// ErrFenced is returned for a fire whose node no longer owns the
// partition at the epoch it gave: the partition moved, and the new owner
// decides the occurrence.
var ErrFenced = errors.New("the partition's lease is no longer held at that epoch")

// Fire is an occurrence of a task that a clock node found due.
type Fire struct {
	Task      string    `json:"task"`
	Scheduled time.Time `json:"scheduled"`
}

// Batch is fires of one partition, to be recorded under its lease.
type Batch struct {
	Lease Lease
	Fires []Fire
}

// Recorded is a fire as the registry holds it. The fires one statement
// recorded share its ID.
type Recorded struct {
	ID int64 `json:"id"`
	Fire
	Partition int       `json:"partition"`
	Node      string    `json:"node"`
	Epoch     int64     `json:"epoch"`
	At        time.Time `json:"at"`
}

// MoveRecord is a recorded move of a partition.
type MoveRecord struct {
	Move
	At     time.Time `json:"at"`
	Epoch  int64     `json:"epoch"`
	Reason string    `json:"reason"`
}

// Status is the cluster as `gnomon cluster` shows it: the nodes, the
// recent moves, and the fires of the last hour per partition and per
// node, so that skew is visible.
type Status struct {
	// Director holds the cluster; the nodes with the director role that
	// are not it are its standbys.
	Director   Director     `json:"director"`
	Space      Space        `json:"space"`
	Timeout    Duration     `json:"node_timeout"`
	Nodes      []Node       `json:"nodes"`
	Moves      []MoveRecord `json:"moves"`
	Partitions []Load       `json:"partitions"`
	// FiresByNode are the fires each node recorded in the hour.
	FiresByNode map[string]int `json:"fires_by_node"`
	// Runs is the target channel.
	Runs Runs `json:"runs"`
}

// Load is a partition's owner and the fires recorded under it in the hour
// before the status was taken.
type Load struct {
	Partition int    `json:"partition"`
	Name      string `json:"name"`
	Node      string `json:"node"`
	Epoch     int64  `json:"epoch"`
	Fires     int    `json:"fires_last_hour"`
}

// Duration renders as Go's duration text in JSON.
type Duration time.Duration

// MarshalText renders d as "5s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads Go's duration text.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	*d = Duration(v)
	return err
}
