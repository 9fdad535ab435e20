package api

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/eventdep"
	"github.com/gnomon-sched/gnomon/internal/jsonenc"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

// MaxEventBody bounds the body of POST /events.
const MaxEventBody = 1 << 20

// EventsResponse is the 202 answer of POST /events.
type EventsResponse struct {
	Triggered []string    `json:"triggered"`
	Validated []Validated `json:"validated"`
}

// WireEvent is the body of POST /events, in the seed's shape.
type WireEvent struct {
	Type      string `json:"eventType"`
	Timestamp string `json:"eventTimestamp"`
	Resource  string `json:"eventResourceId"`
}

// futureSkew is how far ahead of the server's clock an event may be stamped
// before its acceptance is logged as a warning.
const futureSkew = 5 * time.Minute

var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// events is the seed-000 endpoint (spec/events.md §7): one event per
// request, durable before the 202.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		got := r.Header.Get("Content-Type")
		if got == "" {
			got = "none"
		}
		return &Error{Status: http.StatusUnsupportedMediaType, Message: "Content-Type must be application/json (got " + got + ")"}
	}
	buf := bodies.Get().(*bytes.Buffer)
	buf.Reset()
	defer bodies.Put(buf)
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, MaxEventBody)); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &Error{Status: http.StatusRequestEntityTooLarge, Message: "request body larger than 1 MiB"}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return badRequest("truncated request body")
		}
		return err
	}
	ev, err := eventdep.DecodeEvent(buf.Bytes())
	if err != nil {
		var se *eventdep.SyntaxError
		if errors.As(err, &se) {
			return badRequest("%s", se.Msg)
		}
		return &Error{Status: http.StatusUnprocessableEntity, Message: "invalid event: " + err.Error()}
	}
	ahead := ev.At.Sub(s.sched.Now())
	if s.MaxFutureSkew > 0 && ahead > s.MaxFutureSkew {
		return &Error{Status: http.StatusUnprocessableEntity, Message: fmt.Sprintf("invalid event: eventTimestamp: %s is %s ahead of the server clock (the most allowed is %s)",
			ev.At.Format(time.RFC3339Nano), ahead.Round(time.Second), s.MaxFutureSkew)}
	}
	if ahead > futureSkew {
		s.log.Warn("event stamped ahead of the server clock", "type", ev.Type, "resource", ev.Resource,
			"ts", ev.At.Format(time.RFC3339Nano), "ahead", ahead.Round(time.Second).String())
	}
	res, err := s.sched.Post(r.Context(), engine.Data{Type: ev.Type, Resource: ev.Resource, At: ev.At, By: auth.NameOf(r.Context())})
	if err != nil {
		return err
	}
	buf.Reset() // the body was decoded: the buffer holds the answer now
	buf.Write(appendEventsResponse(buf.AvailableBuffer(), res))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, err = w.Write(buf.Bytes())
	return err
}

// appendEventsResponse appends the JSON of an EventsResponse, as
// json.Encoder writes it (with its newline), without reflection.
func appendEventsResponse(b []byte, res *engine.DataResult) []byte {
	b = append(b, `{"triggered":`...)
	b = jsonenc.AppendArray(b, res.Triggered, jsonenc.AppendString)
	b = append(b, `,"validated":`...)
	b = jsonenc.AppendArray(b, res.Validated, func(b []byte, v engine.Validated) []byte {
		b = append(b, `{"configuration":`...)
		b = jsonenc.AppendString(b, v.Configuration)
		b = append(b, `,"type":`...)
		b = jsonenc.AppendString(b, string(v.Type))
		b = append(b, `,"resourceId":`...)
		b = jsonenc.AppendString(b, v.Resource)
		return append(b, '}')
	})
	return append(b, "}\n"...)
}

// ReceivedResponse lists data events the server accepted.
type ReceivedResponse struct {
	Events []scheduler.Received `json:"events"`
	// Next, when set, is the cursor of the next page: more events may
	// remain (see docs/api.md, Paging).
	Next string `json:"next,omitempty"`
}

// receivedScan bounds how many events one answer of received events reads
// back; when it stops short, the answer's next cursor goes on from there.
const receivedScan = 100_000

// received lists the data events the journal holds, newest first
// (count=N, default 20, at most MaxPage an answer), optionally only those a
// configuration stored, from a cursor (see docs/api.md, Paging).
func (s *Server) received(w http.ResponseWriter, r *http.Request) error {
	limit, err := pageCount(r, 20)
	if err != nil {
		return err
	}
	cfg := r.URL.Query().Get("configuration")
	if cfg != "" {
		if _, err := s.taskDef(r, cfg); err != nil {
			return err
		}
	}
	c, hasCursor, err := readCursor(r, "events", "configuration")
	if err != nil {
		return err
	}
	// The journal, as far as the cursor: its data entries up to the one
	// the last event given belongs to, of which the first Skip events
	// (that match) were given.
	view := &journalView{Store: s.sched.Store()}
	if hasCursor {
		view.upTo = c.ID
	}
	evs, err := scheduler.ReceivedEvents(r.Context(), view, cfg, limit+c.Skip+1, receivedScan)
	if err != nil {
		return err
	}
	skip := 0
	for skip < c.Skip && skip < len(evs) && evs[skip].Seq == c.ID {
		skip++
	}
	evs = evs[skip:]
	resp := ReceivedResponse{Events: []scheduler.Received{}}
	next := cursor{List: "events", Query: queryDigest(r, "configuration")}
	switch {
	case len(evs) > limit:
		evs = evs[:limit]
		last := evs[limit-1].Seq
		next.ID = last
		for _, e := range evs {
			if e.Seq == last {
				next.Skip++
			}
		}
		if last == c.ID {
			next.Skip += c.Skip
		}
		resp.Next = next.encode()
	case !view.exhausted && view.oldest > 1:
		// The scan stopped before the start of the journal: go on
		// below the oldest entry it read.
		next.ID = view.oldest - 1
		resp.Next = next.encode()
	}
	for i := range evs {
		evs[i].At = s.local(evs[i].At)
	}
	resp.Events = append(resp.Events, evs...)
	return writeJSON(w, http.StatusOK, resp)
}

// journalView is a store whose journal of one kind ends at entry upTo
// (0: at its end), and that notes how far back it was read: the oldest
// entry given, and whether the start of the journal was reached.
type journalView struct {
	store.Store
	upTo      int64
	oldest    int64
	exhausted bool
}

// JournalBefore reads the journal as the view has it.
func (v *journalView) JournalBefore(ctx context.Context, kind string, before int64, limit int) ([]store.Entry, error) {
	if before <= 0 && v.upTo > 0 {
		before = v.upTo + 1
	}
	entries, err := v.Store.JournalBefore(ctx, kind, before, limit)
	if err != nil {
		return nil, err
	}
	if len(entries) < limit {
		v.exhausted = true
	}
	if n := len(entries); n > 0 && (v.oldest == 0 || entries[n-1].Seq < v.oldest) {
		v.oldest = entries[n-1].Seq
	}
	return entries, nil
}
