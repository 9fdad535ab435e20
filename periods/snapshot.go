package periods

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Snapshot is the whole state of a forest as plain data that encodes as
// JSON: what a store keeps. Restore rebuilds the forest from it, and the
// restored forest answers every later event as the original would.
//
// A store need not write whole snapshots: the Output of each Apply names
// the nodes (Nodes, Dropped), log entries (Log) and definitions (Trees,
// Removed; Definition gives the file) that changed, and Snapshot's parts
// are those rows.
type Snapshot struct {
	// Now is the instant of the latest Apply.
	Now time.Time `json:"now"`
	// LastRunID is the highest run ID handed out.
	LastRunID int64          `json:"last_run_id"`
	Files     []SnapshotFile `json:"files"`
	// Ticks are the next ticks of the continuous levels.
	Ticks []LevelTick  `json:"ticks,omitempty"`
	Nodes []NodeRecord `json:"nodes"`
}

// SnapshotFile is one tree file, as Format writes it.
type SnapshotFile struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// LevelTick is the next tick of a continuous level.
type LevelTick struct {
	Process string    `json:"process"`
	Next    time.Time `json:"next"`
}

// NodeRecord is one node and its event log, newest first.
type NodeRecord struct {
	Node
	Log []LogEntry `json:"log,omitempty"`
}

// Snapshot returns the forest's state: files by name, nodes by process and
// timeperiod.
func (f *Forest) Snapshot() Snapshot {
	s := Snapshot{Now: f.now, LastRunID: f.lastRun}
	for _, name := range slices.Sorted(maps.Keys(f.files)) {
		s.Files = append(s.Files, SnapshotFile{Name: name, Text: string(Format(f.files[name]))})
	}
	s.Ticks = f.Ticks()
	for _, l := range f.levelOrder {
		for _, n := range l.nodes {
			s.Nodes = append(s.Nodes, NodeRecord{Node: n.view(), Log: exportLog(n.log)})
		}
	}
	return s
}

// Ticks returns the next ticks of the continuous levels: with Now, the
// part of a Snapshot that is not definitions or nodes.
func (f *Forest) Ticks() []LevelTick {
	var ticks []LevelTick
	for _, l := range f.levelOrder {
		if l.continuous() {
			ticks = append(ticks, LevelTick{Process: l.name, Next: l.nextTick})
		}
	}
	return ticks
}

func exportLog(log []logEntry) []LogEntry {
	if len(log) == 0 {
		return nil
	}
	out := make([]LogEntry, len(log))
	for i := range log {
		out[len(log)-1-i] = log[i].export()
	}
	return out
}

// Restore loads a snapshot into an empty forest. Nodes the snapshot lacks,
// between a tree's start and the current period, are embryo. It checks
// the snapshot: definitions must parse and agree with each other, and
// every node must belong to a level and be consistent (a run only on an
// in_progress or final_run node, a final_run node with one).
//
// After a restart, apply Restart to request the outstanding runs again.
func (f *Forest) Restore(s Snapshot) error {
	if len(f.trees) > 0 || len(f.files) > 0 {
		return fmt.Errorf("restore: the forest is not empty: %w", ErrRefused)
	}
	if err := f.restore(s); err != nil {
		*f = *New(f.cfg)
		return fmt.Errorf("restore: %w", err)
	}
	return nil
}

func (f *Forest) restore(s Snapshot) error {
	f.setNow(s.Now.UTC())
	f.lastRun = s.LastRunID
	// Parse every file once permissively to learn all trees, then again
	// against the others, as Define would have.
	type known struct {
		file string
		deps []string
	}
	trees := map[string]known{}
	procs := map[string][2]string{}
	files := map[string]*File{}
	for _, sf := range s.Files {
		if _, dup := files[sf.Name]; dup {
			return fmt.Errorf("file %s twice", sf.Name)
		}
		// The file's own trees, so that any other name passes for a
		// tree of another file.
		var own struct{ Trees []struct{ Name string } }
		_ = json.Unmarshal([]byte(sf.Text), &own) // Parse reports a bad file
		mine := map[string]bool{}
		for _, t := range own.Trees {
			mine[t.Name] = true
		}
		file, err := Parse(sf.Name, []byte(sf.Text), Options{
			stored:   true,
			TreeFunc: func(name string) (string, []string, bool) { return "", nil, !mine[name] },
		})
		if err != nil {
			return err
		}
		files[sf.Name] = file
		for _, t := range file.Trees {
			trees[t.Name] = known{sf.Name, t.DependentOn}
			for _, l := range t.Levels {
				procs[l.Process] = [2]string{t.Name, sf.Name}
			}
		}
	}
	f.out = &Output{}
	defer func() { f.out = nil }()
	for _, sf := range s.Files {
		file, err := Parse(sf.Name, []byte(sf.Text), Options{
			stored: true,
			TreeFunc: func(name string) (string, []string, bool) {
				k, ok := trees[name]
				if !ok || k.file == sf.Name {
					return "", nil, false
				}
				return k.file, k.deps, true
			},
			ProcessFunc: func(name string) (string, string, bool) {
				p, ok := procs[name]
				if !ok || p[1] == sf.Name {
					return "", "", false
				}
				return p[0], p[1], true
			},
		})
		if err != nil {
			return err
		}
		f.define(sf.Name, file)
	}
	for _, n := range f.queue {
		n.queued = false
	}
	f.queue = f.queue[:0]
	for _, n := range f.dirty {
		n.dirty = false
	}
	f.dirty = f.dirty[:0]

	for _, t := range s.Ticks {
		l, ok := f.procs[t.Process]
		if !ok || !l.continuous() {
			return fmt.Errorf("tick of %s: no such continuous process", t.Process)
		}
		l.nextTick = t.Next.UTC()
	}
	for _, r := range s.Nodes {
		if err := f.restoreNode(r); err != nil {
			return fmt.Errorf("node %s@%s: %w", r.Process, r.Timeperiod, err)
		}
	}
	for _, t := range f.treeOrder {
		f.recount(t)
		for _, l := range t.levels {
			l.heap = nil
			for _, n := range l.nodes {
				n.mark = 0
				n.inHeap = n.state.Active()
				if n.inHeap {
					l.heap.push(n)
				}
			}
		}
	}
	return nil
}

func (f *Forest) restoreNode(r NodeRecord) error {
	l, ok := f.procs[r.Process]
	if !ok {
		return errors.New("no such process")
	}
	n := l.at(r.Timeperiod)
	if n == nil {
		return fmt.Errorf("no such period in %s (from %s up to the current period)", l.name, l.first)
	}
	if n.mark != 0 {
		return errors.New("listed twice")
	}
	n.mark = 1 // a duplicate's marker, cleared once all are read
	switch {
	case r.State >= numStates:
		return fmt.Errorf("bad state %d", r.State)
	case r.Failures < 0:
		return fmt.Errorf("negative failures")
	case (r.RunID != 0) != r.RunStatus.Outstanding():
		return fmt.Errorf("run %d with status %q", r.RunID, r.RunStatus)
	case r.RunID != 0 && r.State != InProgress && r.State != FinalRun:
		return fmt.Errorf("run %d on a %s node", r.RunID, r.State)
	case r.RunID == 0 && r.State == FinalRun:
		return errors.New("final_run without a run")
	case r.RunID < 0:
		return fmt.Errorf("bad run ID %d", r.RunID)
	}
	if r.RunID != 0 {
		if _, dup := f.outstanding[r.RunID]; dup {
			return fmt.Errorf("run %d on two nodes", r.RunID)
		}
		f.outstanding[r.RunID] = n
		n.runStatus = 1
		if r.RunStatus == RunRunning {
			n.runStatus = 2
		}
	}
	n.state, n.failures, n.run = r.State, int32(r.Failures), r.RunID
	if len(r.Log) > MaxLog {
		r.Log = r.Log[:MaxLog]
	}
	n.log = nil
	if len(r.Log) > 0 {
		n.log = make([]logEntry, len(r.Log))
		for i, e := range r.Log {
			n.log[len(r.Log)-1-i] = importEntry(e)
		}
	}
	return nil
}
