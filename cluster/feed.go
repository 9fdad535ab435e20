package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

// FireSink is where a director hands the fires clock nodes record: its
// engine (engine.Fired), and the cursor that says how far it has taken
// them in, kept with its state.
type FireSink interface {
	// Take hands fires to the engine and returns once they are durable.
	// A fire handed twice must count once (the engine ignores an
	// occurrence it handled).
	Take(ctx context.Context, fires []Recorded) error
	// Cursor returns the ID below which every fire was taken.
	Cursor(ctx context.Context) (int64, error)
	// SetCursor records it.
	SetCursor(ctx context.Context, id int64) error
}

// feedPoll is how often the director looks for new fires. A fire waits
// at most this long before the engine starts its run.
const feedPoll = 20 * time.Millisecond

// feedBatch is how many fires the director asks for at once: it takes
// the statements that hold them whole.
const feedBatch = 5000

// gapWait is how long the feed waits for a fire ID it has not seen while
// it has seen later ones. IDs come from a sequence, one per statement
// that recorded fires: a statement may commit after a later one, and one
// that failed after taking its ID leaves an ID that never appears. Past
// gapWait the ID is taken as one that never will.
const gapWait = 10 * time.Second

// Feed takes fires from the registry to the director's engine: at least
// once (its cursor lags behind what it handed), which the engine makes
// exactly once. A director runs one (Run) unless it simulates: then it
// polls at each step of its virtual clock (Poll). A Feed is used by one
// goroutine at a time.
type Feed struct {
	reg   FireSource
	sink  FireSink
	clock clock.Clock
	log   *slog.Logger
	// director and epoch fence the pruning of fires taken in.
	director string
	epoch    int64

	// pruned is when fires were last pruned.
	pruned time.Time

	// started is set once the cursor was read.
	started bool
	cursor  int64
	// seen are IDs above the cursor already handed, with when they were
	// recorded; hi is the highest.
	seen map[int64]time.Time
	hi   int64
}

// NewFeed returns a feed of the fires of reg to sink, for director at
// epoch (Config.Node.ID and Config.Epoch): it prunes the fires taken in
// only while director holds the cluster at epoch. c is the clock fires
// are stamped with (the director's, virtual when it simulates).
func NewFeed(reg FireSource, director string, epoch int64, sink FireSink, c clock.Clock, log *slog.Logger) *Feed {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Feed{reg: reg, director: director, epoch: epoch, sink: sink, clock: c, log: log, seen: map[int64]time.Time{}}
}

// run polls every feedPoll until ctx is done, retrying what fails: the
// node's director role runs it for as long as the node lives.
func (f *Feed) run(ctx context.Context) {
	for !f.started {
		err := f.start(ctx)
		if err == nil {
			break
		}
		f.log.Warn("could not read the cursor of fires", "err", err)
		if !sleep(ctx, time.Second) {
			return
		}
	}
	for {
		n, err := f.poll(ctx)
		if err != nil && ctx.Err() == nil {
			f.log.Warn("could not take fires in", "err", err)
			if !sleep(ctx, time.Second) {
				return
			}
			continue
		}
		if n < feedBatch && !sleep(ctx, feedPoll) {
			return
		}
	}
}

// start reads the cursor, once.
func (f *Feed) start(ctx context.Context) error {
	if f.started {
		return nil
	}
	c, err := f.sink.Cursor(ctx)
	if err != nil {
		return err
	}
	f.cursor, f.hi, f.started = c, c, true
	return nil
}

// Poll hands the sink, once, every fire recorded that it has not handed
// yet (up to a batch of them), and returns how many it read.
func (f *Feed) Poll(ctx context.Context) (int, error) {
	if err := f.start(ctx); err != nil {
		return 0, fmt.Errorf("cluster: cursor of fires: %w", err)
	}
	return f.poll(ctx)
}

// poll hands the fires recorded after the highest it has seen, and those
// of the gaps below it that appeared since, then moves the cursor over
// what is contiguous. It returns how many fires it read.
func (f *Feed) poll(ctx context.Context) (int, error) {
	rows, err := f.reg.Fires(ctx, f.hi, feedBatch)
	if err != nil {
		return 0, err
	}
	if gaps := f.gaps(); len(gaps) > 0 {
		late, err := f.reg.FiresByID(ctx, gaps)
		if err != nil {
			return 0, err
		}
		rows = append(late, rows...)
	}
	if len(rows) > 0 {
		if err := f.sink.Take(ctx, rows); err != nil {
			return 0, err
		}
		for _, r := range rows {
			f.seen[r.ID] = r.At
			f.hi = max(f.hi, r.ID)
		}
	}
	old := f.cursor
	now := f.clock.Now()
	for f.cursor < f.hi {
		if _, ok := f.seen[f.cursor+1]; ok {
			delete(f.seen, f.cursor+1)
			f.cursor++
			continue
		}
		// A gap: skip it once a later fire is older than gapWait.
		if at, ok := f.seen[f.nextSeen()]; !ok || now.Sub(at) < gapWait {
			break
		}
		f.cursor++
	}
	if f.cursor != old {
		if err := f.sink.SetCursor(ctx, f.cursor); err != nil {
			return len(rows), err
		}
	}
	if now.Sub(f.pruned) >= pruneEvery {
		f.pruned = now
		if err := f.reg.Prune(ctx, f.director, f.epoch, f.cursor, now.Add(-keepFires)); err != nil {
			f.log.Warn("could not prune fires", "err", err)
		}
	}
	return len(rows), nil
}

// Fires taken in are kept keepFires (the load `gnomon cluster` shows is
// the last hour's), and pruned every pruneEvery.
const (
	keepFires  = 2 * time.Hour
	pruneEvery = time.Minute
)

// maxGaps bounds the unseen IDs below the highest that the feed looks for
// again at each poll.
const maxGaps = 1000

// gaps returns the IDs between the cursor and the highest seen that were
// not seen.
func (f *Feed) gaps() []int64 {
	var out []int64
	for id := f.cursor + 1; id < f.hi && len(out) < maxGaps; id++ {
		if _, ok := f.seen[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// nextSeen returns the lowest seen ID above the cursor.
func (f *Feed) nextSeen() int64 {
	for id := f.cursor + 1; id <= f.hi; id++ {
		if _, ok := f.seen[id]; ok {
			return id
		}
	}
	return 0
}

// sleep waits d, reporting false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
