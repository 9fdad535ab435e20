package store

import "time"

// The timeperiod trees of seed 003 as a store keeps them. A store holds
// them as rows it need not understand: the scheduler encodes each node and
// log entry (as JSON) and decodes them when it loads; the store keys them
// by process and timeperiod.

// Trees is what a batch writes of the timeperiod trees.
type Trees struct {
	// Files are tree files defined or redefined, as their text.
	Files []TreeFile
	// DeletedFiles names the tree files that no longer define a tree.
	DeletedFiles []string
	// Dropped removes nodes, with their logs, before Nodes are written.
	Dropped []DroppedNodes
	// Nodes are nodes created or changed.
	Nodes []NodeRow
	// Log are entries appended to the event logs of nodes, oldest
	// first. A store keeps the newest MaxNodeLog of each node.
	Log []NodeLogRow
	// State is the forest-wide state (its clock, the next ticks), nil
	// when unchanged.
	State []byte
}

// MaxNodeLog is how many event-log entries a store keeps for each node.
const MaxNodeLog = 128

// TreeFile is one tree file.
type TreeFile struct {
	Name string
	Text string
}

// DroppedNodes removes the nodes of a process: every one, or when Before is
// set those whose timeperiod is below it.
type DroppedNodes struct {
	Process string
	Before  int64
}

// NodeRow is one node: its key, its state for queries, and its encoding.
type NodeRow struct {
	Process    string
	Timeperiod int64
	State      string
	Body       []byte
}

// NodeLogRow is one entry of a node's event log.
type NodeLogRow struct {
	Process    string
	Timeperiod int64
	At         time.Time
	Body       []byte
}

// TreeSnapshot is the stored state of the timeperiod trees.
type TreeSnapshot struct {
	Files []TreeFile
	Nodes []NodeRow
	// Log holds every node's entries, oldest first.
	Log   []NodeLogRow
	State []byte
}

// Empty reports whether the batch writes nothing of the trees.
func (t *Trees) Empty() bool {
	return t == nil || len(t.Files) == 0 && len(t.DeletedFiles) == 0 && len(t.Dropped) == 0 && len(t.Nodes) == 0 &&
		len(t.Log) == 0 && t.State == nil
}
