package scheduler

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// Received is a data event as the journal recorded it.
type Received struct {
	Seq      int64        `json:"seq"` // of the journal entry that holds it
	At       time.Time    `json:"received"`
	Type     job.DataType `json:"type"`
	Resource string       `json:"resourceId"`
	TS       time.Time    `json:"timestamp"`
	// Accepted names the configurations that stored it, sorted.
	Accepted []string `json:"accepted"`
}

// ReceivedEvents returns the data events the journal holds, newest first,
// at most limit of them, only those a configuration accepted when it is not
// empty. It reads at most scan entries back.
func ReceivedEvents(ctx context.Context, st store.Store, configuration string, limit, scan int) ([]Received, error) {
	out := []Received{}
	var before int64
	for scanned := 0; scanned < scan && len(out) < limit; {
		entries, err := st.JournalBefore(ctx, "data", before, min(1000, scan-scanned))
		if err != nil {
			return nil, err
		}
		if len(entries) == 0 {
			break
		}
		for _, en := range entries {
			before = en.Seq
			var ds []dataEntry
			if err := json.Unmarshal(en.Body, &ds); err != nil {
				return nil, fmt.Errorf("journal entry %d: %w", en.Seq, err)
			}
			scanned += len(ds)
			for i := len(ds) - 1; i >= 0 && len(out) < limit; i-- {
				d := ds[i]
				r := Received{Seq: en.Seq, At: d.Received, Type: d.Type, Resource: d.Resource, TS: d.At, Accepted: []string{}}
				for _, a := range d.Accepted {
					if len(r.Accepted) == 0 || r.Accepted[len(r.Accepted)-1] != a[0] {
						r.Accepted = append(r.Accepted, a[0])
					}
				}
				if configuration == "" || slices.Contains(r.Accepted, configuration) {
					out = append(out, r)
				}
			}
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}
