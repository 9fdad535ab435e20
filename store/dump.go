package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/job"
)

// Dump is the whole content of a store: what gnomon migrate moves from
// one store to another, IDs and sequence numbers kept.
type Dump struct {
	// Snapshot holds the tasks, the runs not ended, the checkpoint of the
	// windows, the timeperiod trees and the named calendars.
	Snapshot *Snapshot
	// Runs and Fires are the whole history, newest first.
	Runs  []job.Run
	Fires []job.Fire
	// Journal is every entry, oldest first.
	Journal []Entry
	// Alerts are every alert, newest first, and their attempts by alert.
	Alerts   []job.Alert
	Attempts map[int64][]job.Attempt
	// Audit is every record, oldest first.
	Audit   []job.AuditRecord
	Cursors map[string]int64
	// Tokens are every API token, revoked ones included.
	Tokens []auth.Token
}

// Counts are how many rows of each kind a dump holds, to compare a copy
// with its source.
type Counts struct {
	Tasks, Runs, Fires, Journal, Windows, Alerts, Attempts, Audit, Cursors, TreeFiles, Nodes, NodeLog, Tokens, Calendars int
}

// Counts counts the rows of a dump.
func (d *Dump) Counts() Counts {
	c := Counts{Tasks: len(d.Snapshot.Tasks), Runs: len(d.Runs), Fires: len(d.Fires), Journal: len(d.Journal),
		Windows: len(d.Snapshot.Windows), Alerts: len(d.Alerts), Audit: len(d.Audit), Cursors: len(d.Cursors),
		TreeFiles: len(d.Snapshot.Trees.Files), Nodes: len(d.Snapshot.Trees.Nodes), NodeLog: len(d.Snapshot.Trees.Log),
		Tokens: len(d.Tokens), Calendars: len(d.Snapshot.Calendars)}
	for _, a := range d.Attempts {
		c.Attempts += len(a)
	}
	return c
}

// CursorLister is a store that lists its cursors.
type CursorLister interface {
	Cursors(ctx context.Context) (map[string]int64, error)
}

// Importer is a store that can take a dump whole.
type Importer interface {
	// Empty reports whether the store holds nothing at all.
	Empty(ctx context.Context) (bool, error)
	// Import writes a dump into the empty store in one transaction,
	// keeping every ID and sequence number.
	Import(ctx context.Context, d *Dump) error
}

// ErrNotEmpty is returned by Import into a store that holds something.
var ErrNotEmpty = errors.New("the target store is not empty")

// page is how many rows ReadDump asks for at a time.
const page = 10_000

// ReadDump reads the whole content of a store, which must list its
// cursors. A server must not be writing to it.
func ReadDump(ctx context.Context, st Store) (*Dump, error) {
	cl, ok := st.(CursorLister)
	if !ok {
		return nil, fmt.Errorf("dump: the store cannot list its cursors")
	}
	d := &Dump{Attempts: map[int64][]job.Attempt{}}
	var err error
	if d.Snapshot, err = st.Load(ctx); err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	for before := int64(0); ; {
		runs, err := st.Runs(ctx, RunQuery{Limit: page, Before: before})
		if err != nil {
			return nil, fmt.Errorf("dump: runs: %w", err)
		}
		d.Runs = append(d.Runs, runs...)
		if len(runs) < page {
			break
		}
		before = runs[len(runs)-1].ID
	}
	if d.Fires, err = st.Fires(ctx, FireQuery{}); err != nil {
		return nil, fmt.Errorf("dump: fires: %w", err)
	}
	for after := int64(0); ; {
		es, err := st.Journal(ctx, after, page)
		if err != nil {
			return nil, fmt.Errorf("dump: journal: %w", err)
		}
		d.Journal = append(d.Journal, es...)
		if len(es) < page {
			break
		}
		after = es[len(es)-1].Seq
	}
	for before := int64(0); ; {
		as, err := st.Alerts(ctx, AlertQuery{Limit: page, Before: before})
		if err != nil {
			return nil, fmt.Errorf("dump: alerts: %w", err)
		}
		d.Alerts = append(d.Alerts, as...)
		if len(as) < page {
			break
		}
		before = as[len(as)-1].ID
	}
	for _, a := range d.Alerts {
		at, err := st.Attempts(ctx, a.ID)
		if err != nil {
			return nil, fmt.Errorf("dump: attempts of alert %d: %w", a.ID, err)
		}
		if len(at) > 0 {
			d.Attempts[a.ID] = at
		}
	}
	for after := int64(0); ; {
		rs, err := st.Audit(ctx, after, page)
		if err != nil {
			return nil, fmt.Errorf("dump: audit: %w", err)
		}
		d.Audit = append(d.Audit, rs...)
		if len(rs) < page {
			break
		}
		after = rs[len(rs)-1].Seq
	}
	if d.Cursors, err = cl.Cursors(ctx); err != nil {
		return nil, fmt.Errorf("dump: cursors: %w", err)
	}
	if d.Tokens, err = st.Tokens(ctx); err != nil {
		return nil, fmt.Errorf("dump: tokens: %w", err)
	}
	return d, nil
}

// Migrate copies the whole content of src into dst, which must be empty
// and an Importer, then reads dst back and compares the counts.
func Migrate(ctx context.Context, src, dst Store) (Counts, error) {
	imp, ok := dst.(Importer)
	if !ok {
		return Counts{}, fmt.Errorf("migrate: the target store cannot import")
	}
	empty, err := imp.Empty(ctx)
	if err != nil {
		return Counts{}, fmt.Errorf("migrate: %w", err)
	}
	if !empty {
		return Counts{}, ErrNotEmpty
	}
	d, err := ReadDump(ctx, src)
	if err != nil {
		return Counts{}, fmt.Errorf("migrate: source: %w", err)
	}
	if err := imp.Import(ctx, d); err != nil {
		return Counts{}, fmt.Errorf("migrate: %w", err)
	}
	back, err := ReadDump(ctx, dst)
	if err != nil {
		return Counts{}, fmt.Errorf("migrate: reading the copy back: %w", err)
	}
	if want, got := d.Counts(), back.Counts(); want != got {
		return Counts{}, fmt.Errorf("migrate: the copy holds %+v, the source %+v", got, want)
	}
	return d.Counts(), nil
}
