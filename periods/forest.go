package periods

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Config tunes a Forest. The zero value is usable.
type Config struct {
	// NextRunIDFunc hands out the ID of each run the forest requests: a
	// positive ID no run has had. It must give the same IDs when a journal
	// is replayed, as a counter kept with the state does. Nil means the
	// forest counts itself, from 1 (the count is part of the Snapshot).
	NextRunIDFunc func() int64
	// NameTakenFunc, FunctionKnownFunc and OwnerFunc are what a Define's
	// Text is parsed against, when it has no Plan (see Define): a plan was
	// checked against them where it was made.
	//
	// NameTakenFunc reports whether a name belongs to a job of another
	// kind, so that no process takes it. It must not report the forest's
	// own processes (Process tells those), or a file could not be defined
	// again. Nil means no name is taken.
	NameTakenFunc func(name string) bool
	// FunctionKnownFunc reports whether a function name is registered.
	// Nil accepts every well-formed name.
	FunctionKnownFunc func(name string) bool
	// OwnerFunc says why a level's command may not run as owner (see
	// Options.OwnerFunc); nil accepts every well-formed owner.
	OwnerFunc func(owner string) error
	// MaxPeriods is the most periods a tree's bottom level may span, from
	// its start to the current period, when the tree is defined: a start
	// mistyped decades early would otherwise build millions of nodes.
	// Zero means DefaultMaxPeriods.
	MaxPeriods int
}

// DefaultMaxPeriods is the default Config.MaxPeriods: over eleven years
// of hours.
const DefaultMaxPeriods = 100000

// Error kinds that callers branch on, matched with errors.Is. A bad
// Define returns Problems instead.
var (
	// ErrNotFound is an unknown process, tree or node.
	ErrNotFound = errors.New("not found")
	// ErrInvalid is a malformed event: a bad key, outcome or argument.
	ErrInvalid = errors.New("invalid")
	// ErrRefused is an event the state forbids, such as removing a tree
	// another depends on.
	ErrRefused = errors.New("refused")
)

// Forest holds the tree definitions and the state of every node. Apply
// changes it; the other methods only read it.
//
// A Forest is not safe for concurrent use: one goroutine owns it. Its zero
// value is not usable; call New.
type Forest struct {
	cfg   Config
	files map[string]*File
	trees map[string]*tree
	procs map[string]*level
	// treeOrder and levelOrder are the trees by name and the levels by
	// process name: every walk over them is in this order.
	treeOrder  []*tree
	levelOrder []*level
	// outstanding holds the nodes with a run, by run ID.
	outstanding map[int64]*node
	lastRun     int64

	now     time.Time
	nowSec  int64 // now in whole Unix seconds (floor)
	nowNsec int   // and its nanoseconds

	stamp  uint32 // visit stamp of the current cascade
	visits int    // nodes evaluated or visited by cascades, for tests

	// The Apply in progress.
	out     *Output
	queue   []*node
	dirty   []*node
	cascade []*node // work list of a cascade, reused
	dry     bool
	// by is the operator whose Skip or Reprocess is applied: the runs
	// it starts and cancels name them (Run.By, Run.EndedBy).
	by string
}

type tree struct {
	name        string
	file        string
	def         Tree
	start       Key   // the first hour
	lag         int64 // seconds
	maxFailures int32
	levels      []*level // coarsest first
	byQ         [Yearly + 1]*level
	deps        []*tree // the trees of dependentOn, by name
	dependants  []*tree // the trees whose dependentOn holds this one, by name
}

type level struct {
	tree       *tree
	pos        int // index in tree.levels
	name       string
	q          Qualifier
	def        Level
	every      int64     // seconds, continuous levels only
	nextTick   time.Time // continuous levels only
	first      Key       // key of nodes[0]
	nodes      []*node   // consecutive periods from first
	heap       nodeHeap  // every active node, and stale entries
	counts     [numStates]int
	builtUntil int // len(nodes) before the current build
}

// New returns an empty forest.
func New(cfg Config) *Forest {
	if cfg.MaxPeriods <= 0 {
		cfg.MaxPeriods = DefaultMaxPeriods
	}
	return &Forest{
		cfg:         cfg,
		files:       map[string]*File{},
		trees:       map[string]*tree{},
		procs:       map[string]*level{},
		outstanding: map[int64]*node{},
	}
}

func (l *level) continuous() bool { return l.def.StateMachine == Continuous }

// at returns the node of key k, nil if there is none.
func (l *level) at(k Key) *node {
	if len(l.nodes) == 0 || k < l.first {
		return nil
	}
	i := l.q.Sub(k, l.first)
	if i < 0 || i >= int64(len(l.nodes)) {
		return nil
	}
	return l.nodes[i]
}

// span returns the indexes [lo, hi) of the nodes whose keys fall in
// [from, to), clamped to the nodes that exist.
func (l *level) span(from, to Key) (int, int) {
	if len(l.nodes) == 0 {
		return 0, 0
	}
	lo := max(l.q.Sub(from, l.first), 0)
	hi := min(l.q.Sub(to, l.first), int64(len(l.nodes)))
	if hi < lo {
		return 0, 0
	}
	return int(lo), int(hi)
}

func (l *level) parentLevel() *level {
	if l.pos == 0 {
		return nil
	}
	return l.tree.levels[l.pos-1]
}

func (l *level) childLevel() *level {
	if l.pos+1 >= len(l.tree.levels) {
		return nil
	}
	return l.tree.levels[l.pos+1]
}

func (f *Forest) parent(n *node) *node {
	pl := n.lvl.parentLevel()
	if pl == nil {
		return nil
	}
	return pl.at(pl.q.truncate(n.key))
}

// children returns the nodes of the next finer level within n's period.
func (f *Forest) children(n *node) []*node {
	cl := n.lvl.childLevel()
	if cl == nil {
		return nil
	}
	lo, hi := cl.span(cl.q.KeyAt(n.lvl.q.Start(n.key)), cl.q.KeyAt(n.lvl.q.End(n.key)))
	return cl.nodes[lo:hi]
}

// counterpart returns the node of n's qualifier and key in tree t, nil if
// t has no such level or node.
func counterpart(n *node, t *tree) *node {
	if l := t.byQ[n.lvl.q]; l != nil {
		return l.at(n.key)
	}
	return nil
}

// next returns next(P): the earliest active node of the level.
func (l *level) next() *node {
	for len(l.heap) > 0 {
		n := l.heap[0]
		if n.state.Active() {
			return n
		}
		n.inHeap = false
		l.heap.pop()
	}
	return nil
}

func (f *Forest) closed(n *node) bool { return f.nowSec >= n.end }

func (f *Forest) due(n *node) bool {
	d := n.end + n.lvl.tree.lag
	return f.nowSec > d || (f.nowSec == d && f.nowNsec > 0)
}

// Now returns the instant of the latest Apply.
func (f *Forest) Now() time.Time { return f.now }

// Apply performs one event at instant now and returns what it did. An
// instant earlier than the latest one applied counts as the latest: the
// forest's clock does not go back. A rejected event returns an error and
// changes nothing.
func (f *Forest) Apply(ev Event, now time.Time) (*Output, error) {
	now = now.UTC()
	if now.Before(f.now) {
		now = f.now
	}
	var plan *File
	switch ev := ev.(type) {
	case Define:
		p, err := f.planDefine(ev, now)
		if err != nil {
			return nil, err
		}
		plan = p
	case Remove:
		if err := f.checkRemove(ev.Tree); err != nil {
			return nil, err
		}
	case Tick, Restart:
	case ContinuousTick:
		if ev.Process != "" {
			l, ok := f.procs[ev.Process]
			if !ok {
				return nil, fmt.Errorf("tick %s: process %w", ev.Process, ErrNotFound)
			}
			if !l.continuous() {
				return nil, fmt.Errorf("tick %s: a discrete process has no ticks: %w", ev.Process, ErrInvalid)
			}
		}
	case RunStarted:
	case RunResult:
		if !ev.Outcome.valid() {
			return nil, fmt.Errorf("run %d: outcome %q: %w", ev.RunID, ev.Outcome, ErrInvalid)
		}
	case Skip:
		if len(ev.Timeperiods) == 0 {
			return nil, fmt.Errorf("skip %s: no timeperiod: %w", ev.Process, ErrInvalid)
		}
		for _, tp := range ev.Timeperiods {
			if _, err := f.lookup(ev.Process, tp, now, ev.DryRun); err != nil {
				return nil, fmt.Errorf("skip: %w", err)
			}
		}
	case Reprocess:
		if _, err := f.lookup(ev.Process, ev.Timeperiod, now, ev.DryRun); err != nil {
			return nil, fmt.Errorf("reprocess: %w", err)
		}
	case Backfill:
		if _, _, _, err := f.backfillRange(ev); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("event %T: %w", ev, ErrInvalid)
	}

	f.out = &Output{}
	defer func() { f.out, f.by = nil, "" }()
	if dry := dryRun(ev); dry {
		// A dry run reads the state as it is: it neither moves the clock
		// nor builds nodes.
		f.dry = true
		defer func() { f.dry = false }()
		f.out.DryRun = true
		switch ev := ev.(type) {
		case Skip:
			f.skip(ev)
		case Reprocess:
			f.reprocess(ev)
		case Backfill:
			f.backfill(ev)
		}
		return f.out, nil
	}

	prev := f.now
	f.setNow(now)
	switch ev := ev.(type) {
	case Define:
		f.define(ev.File, plan)
	case Remove:
		f.remove(ev.Tree)
	}
	f.build(prev)
	switch ev := ev.(type) {
	case Tick:
		for _, l := range f.levelOrder {
			if l.continuous() && !l.nextTick.After(f.now) {
				f.tick(l)
				l.nextTick = nextTick(f.now, l.every)
			}
		}
	case ContinuousTick:
		f.by = ev.By
		for _, l := range f.levelOrder {
			if l.continuous() && (ev.Process == "" || ev.Process == l.name) {
				f.tick(l)
			}
		}
	case RunStarted:
		f.started(ev)
	case RunResult:
		f.result(ev)
	case Skip:
		f.by = ev.By
		f.skip(ev)
	case Reprocess:
		f.by = ev.By
		f.reprocess(ev)
	case Backfill:
		f.by = ev.By
		f.backfill(ev)
	case Restart:
		f.restart()
	}
	for _, l := range f.levelOrder {
		if n := l.next(); n != nil {
			f.enqueue(n)
		}
	}
	f.settle()
	f.finish()
	return f.out, nil
}

func dryRun(ev Event) bool {
	switch ev := ev.(type) {
	case Skip:
		return ev.DryRun
	case Reprocess:
		return ev.DryRun
	case Backfill:
		return ev.DryRun
	}
	return false
}

func (f *Forest) setNow(now time.Time) {
	f.now = now
	f.nowSec = now.Unix()
	f.nowNsec = now.Nanosecond()
}

// nextTick returns the first multiple of every (whole seconds since the
// Unix epoch) after t: ticks are aligned, so a restart keeps them.
func nextTick(t time.Time, every int64) time.Time {
	return time.Unix((floorDiv(t.Unix(), every)+1)*every, 0).UTC()
}

// lookup finds the node of an operator's event: the process, and the
// timeperiod cast to its level. Without dry, the node may be one the
// build at now is about to create.
func (f *Forest) lookup(process, tp string, now time.Time, dry bool) (*node, error) {
	l, ok := f.procs[process]
	if !ok {
		return nil, fmt.Errorf("process %s: %w", process, ErrNotFound)
	}
	k, err := ParseKey(tp)
	if err == nil {
		k, err = l.q.Cast(k)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v: %w", process, err, ErrInvalid)
	}
	if n := l.at(k); n != nil {
		return n, nil
	}
	bottom := l.tree.levels[len(l.tree.levels)-1]
	built := bottom.q.KeyAt(now) >= bottom.q.truncate(l.tree.start)
	if !dry && built && k >= l.q.truncate(l.tree.start) && k <= l.q.KeyAt(now) {
		return nil, nil // built by this Apply
	}
	return nil, fmt.Errorf("%s@%s: no such node (the tree starts at %s; nodes exist up to the current period): %w",
		process, k, l.tree.start, ErrNotFound)
}

// build creates the nodes of every tree up to the current period, and
// queues the nodes that closed since prev.
func (f *Forest) build(prev time.Time) {
	for _, t := range f.treeOrder {
		f.buildTree(t)
	}
	if prev.IsZero() {
		return
	}
	for _, l := range f.levelOrder {
		// The nodes that closed in (prev, now]: an awaiting node may now
		// be finalizable (rule 7), a parent skipped (rule 13).
		lo, hi := l.span(l.q.KeyAt(prev), l.q.KeyAt(f.now))
		hi = min(hi, l.builtUntil)
		for _, n := range l.nodes[lo:max(lo, hi)] {
			if n.state.Active() {
				f.enqueue(n)
			}
		}
	}
}

func (f *Forest) buildTree(t *tree) {
	bottom := t.levels[len(t.levels)-1]
	target := bottom.q.KeyAt(f.now)
	for _, l := range t.levels {
		l.builtUntil = len(l.nodes)
		if target < bottom.q.truncate(t.start) {
			continue
		}
		upto := l.q.truncate(target)
		k := l.q.truncate(t.start)
		if len(l.nodes) > 0 {
			k = l.q.Next(l.q.Add(l.first, int64(len(l.nodes)-1)))
		} else {
			l.first = k
		}
		for ; k <= upto; k = l.q.Next(k) {
			n := &node{lvl: l, key: k, end: l.q.endUnix(k)}
			l.nodes = append(l.nodes, n)
			l.counts[Embryo]++
			n.inHeap = true
			l.heap.push(n)
			f.markDirty(n)
			if p := f.parent(n); p != nil {
				p.kids++
			}
		}
	}
}

func (f *Forest) enqueue(n *node) {
	if !n.queued {
		n.queued = true
		f.queue = append(f.queue, n)
	}
}

func (f *Forest) markDirty(n *node) {
	if !n.dirty && !f.dry {
		n.dirty = true
		f.dirty = append(f.dirty, n)
	}
}

// settle applies the rules to the queued nodes until none is left; each
// change queues the nodes it may concern.
func (f *Forest) settle() {
	for i := 0; i < len(f.queue); i++ {
		n := f.queue[i]
		f.queue[i] = nil
		n.queued = false
		f.evaluate(n)
	}
	f.queue = f.queue[:0]
}

// finish completes the output.
func (f *Forest) finish() {
	for _, l := range f.levelOrder {
		l.next() // drop stale heap tops, so that NextWake only reads
	}
	out := f.out
	if len(f.dirty) > 0 {
		slices.SortFunc(f.dirty, func(a, b *node) int {
			if c := strings.Compare(a.lvl.name, b.lvl.name); c != 0 {
				return c
			}
			return cmpKey(a.key, b.key)
		})
		out.Nodes = make([]Node, len(f.dirty))
		for i, n := range f.dirty {
			out.Nodes[i] = n.view()
			n.dirty = false
		}
		clear(f.dirty)
		f.dirty = f.dirty[:0]
	}
	slices.SortFunc(out.Dropped, func(a, b Dropped) int { return strings.Compare(a.Process, b.Process) })
	slices.Sort(out.Trees)
	slices.Sort(out.Removed)
}

func cmpKey(a, b Key) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// NextWake returns the earliest instant at which a Tick has work to do,
// or the zero time if none: the start of the next period of a tree's
// bottom level (new nodes, closing periods), a discrete node coming due,
// a continuous level's tick while its open period awaits one. Results and
// operator actions make work too, but they are events of their own.
func (f *Forest) NextWake() time.Time {
	var w time.Time
	earlier := func(t time.Time) {
		if w.IsZero() || t.Before(w) {
			w = t
		}
	}
	for _, t := range f.treeOrder {
		bottom := t.levels[len(t.levels)-1]
		cur := bottom.q.KeyAt(f.now)
		if first := bottom.q.truncate(t.start); cur < first {
			earlier(bottom.q.Start(first))
		} else {
			earlier(bottom.q.End(cur))
		}
	}
	for _, l := range f.levelOrder {
		if l.continuous() {
			if n := l.at(l.q.KeyAt(f.now)); n != nil && n.state == InProgress && n.run == 0 && !f.closed(n) {
				earlier(l.nextTick)
			}
			continue
		}
		if len(l.heap) == 0 {
			continue
		}
		if n := l.heap[0]; n.state == Embryo && !f.due(n) {
			earlier(time.Unix(n.end+l.tree.lag, 1).UTC())
		}
	}
	return w
}
