package periods

import "time"

// Cause says what made a node change, in its event log and in Output.
type Cause string

// Causes of a change.
const (
	// CauseScheduler: the state machine moved on its own (rules 1, 2, 3,
	// 4, 7 and 13): a period came due or closed, a gate opened.
	CauseScheduler Cause = "scheduler"
	// CauseRun: a run ended (rules 5, 6, 9, 10, 11 and 12).
	CauseRun Cause = "run"
	// CauseTick: a continuous level's tick ran the open period again
	// (rule 8).
	CauseTick Cause = "tick"
	// CauseOperator: an operator skipped or reprocessed this node (rules
	// 14, 15 and 16).
	CauseOperator Cause = "operator"
	// CauseSkip: a skip cascade reached this node (§5); Origin is where
	// it began.
	CauseSkip Cause = "skip"
	// CauseReprocess: a reprocess cascade reached this node (§6); Origin
	// is where it began.
	CauseReprocess Cause = "reprocess"
	// CauseRestart: the node's run was requested again after a restart.
	CauseRestart Cause = "restart"
)

var causes = [...]Cause{"", CauseScheduler, CauseRun, CauseTick, CauseOperator, CauseSkip, CauseReprocess, CauseRestart}

func causeIndex(c Cause) uint8 {
	for i, x := range causes {
		if x == c {
			return uint8(i)
		}
	}
	return 0
}

// Ref names one node.
type Ref struct {
	Process    string `json:"process"`
	Timeperiod Key    `json:"timeperiod"`
}

// LogEntry is one entry of a node's event log: who or what changed it,
// from which state to which, and when.
type LogEntry struct {
	At    time.Time `json:"at"`
	From  State     `json:"from"`
	To    State     `json:"to"`
	Rule  int       `json:"rule"`
	Cause Cause     `json:"cause"`
	RunID int64     `json:"run_id,omitempty"`
	// By is the operator who asked, for operator actions and their
	// cascades.
	By string `json:"by,omitempty"`
	// Origin is the node a cascade began at.
	Origin *Ref `json:"origin,omitempty"`
	// Message is what a run's worker reported.
	Message string `json:"message,omitempty"`
}

// MaxLog is how many entries a node's event log keeps; older ones are
// dropped.
const MaxLog = 128

// logEntry is a LogEntry as a node keeps it: 32 bytes, the rarer fields
// behind a pointer that the entries of one cascade share.
type logEntry struct {
	at    int64 // Unix nanoseconds
	run   int64
	extra *logExtra
	rule  uint8
	cause uint8
	from  State
	to    State
}

type logExtra struct {
	by      string
	origin  *Ref
	message string
}

func (e *logEntry) export() LogEntry {
	le := LogEntry{At: time.Unix(0, e.at).UTC(), From: e.from, To: e.to, Rule: int(e.rule),
		Cause: causes[e.cause], RunID: e.run}
	if x := e.extra; x != nil {
		le.By, le.Message = x.by, x.message
		if x.origin != nil {
			o := *x.origin
			le.Origin = &o
		}
	}
	return le
}

func importEntry(le LogEntry) logEntry {
	e := logEntry{at: le.At.UnixNano(), run: le.RunID, rule: uint8(le.Rule), cause: causeIndex(le.Cause), from: le.From, to: le.To}
	if le.By != "" || le.Origin != nil || le.Message != "" {
		e.extra = &logExtra{by: le.By, message: le.Message}
		if le.Origin != nil {
			o := *le.Origin
			e.extra.origin = &o
		}
	}
	return e
}

// Node is the state of one node, (process, timeperiod), as a store keeps
// it. Its event log is kept apart (Output.Log, NodeDetail.Log).
type Node struct {
	Process    string    `json:"process"`
	Tree       string    `json:"tree"`
	Qualifier  Qualifier `json:"qualifier"`
	Timeperiod Key       `json:"timeperiod"`
	State      State     `json:"state"`
	// Failures counts the failed runs since the node last started.
	Failures int `json:"failures,omitempty"`
	// RunID is the node's outstanding run, 0 if none. An in_progress node
	// without one awaits its final run.
	RunID int64 `json:"run_id,omitempty"`
	// RunStatus is the status of RunID: requested or running.
	RunStatus RunStatus `json:"run_status,omitempty"`
}

// NodeDetail is one node with what surrounds it, for display.
type NodeDetail struct {
	Node
	// Start and End bound the period, [Start, End).
	Start time.Time
	End   time.Time
	// Awaiting is set for an in_progress node without a run: it waits to
	// become finalizable for its final run.
	Awaiting bool
	// Parent is the node of the next coarser level, nil at the top.
	Parent *Node
	// Children are the nodes of the next finer level within the period.
	Children []Node
	// Counterparts are the nodes of the same qualifier and timeperiod in
	// the trees this node's tree depends on; Dependants those in the
	// trees that depend on it.
	Counterparts []Node
	Dependants   []Node
	// Log is the node's event log, newest first.
	Log []LogEntry
}

// node is the state of one node.
type node struct {
	lvl *level
	key Key
	end int64 // the period's end in Unix seconds
	run int64 // the outstanding run, 0 if none
	log []logEntry
	// Counts of the children (nodes of the next finer level in the
	// period) that exist, are finished and are skipped.
	kids, kidsDone, kidsSkipped int32
	failures                    int32
	mark                        uint32 // cascade visit stamp
	state                       State
	runStatus                   uint8 // 0 none, 1 requested, 2 running
	queued, inHeap, dirty       bool
}

var runStatuses = [...]RunStatus{"", RunRequested, RunRunning}

func (n *node) view() Node {
	return Node{Process: n.lvl.name, Tree: n.lvl.tree.name, Qualifier: n.lvl.q, Timeperiod: n.key, State: n.state,
		Failures: int(n.failures), RunID: n.run, RunStatus: runStatuses[n.runStatus]}
}

func (n *node) ref() Ref { return Ref{Process: n.lvl.name, Timeperiod: n.key} }

// nodeHeap orders active nodes of one level by key, earliest first. An
// entry may be stale (its node finished since): next pops those.
type nodeHeap []*node

func (h *nodeHeap) push(n *node) {
	*h = append(*h, n)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].key <= s[i].key {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *nodeHeap) pop() {
	s := *h
	last := len(s) - 1
	s[0] = s[last]
	s[last] = nil
	s = s[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && s[l].key < s[m].key {
			m = l
		}
		if r < len(s) && s[r].key < s[m].key {
			m = r
		}
		if m == i {
			break
		}
		s[m], s[i] = s[i], s[m]
		i = m
	}
	*h = s
}
