package store

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/internal/jsonenc"
	"github.com/gnomon-sched/gnomon/job"
)

// The stored forms of definitions, task states and checkpoint parts are
// the same in every store: a store keeps them as opaque JSON documents
// and encodes and decodes them here, so that two stores hold the same
// bytes for the same state and a migration between them copies bytes.

// EncodeDef returns the stored form of a definition.
func EncodeDef(t *job.Task) ([]byte, error) {
	b, err := json.Marshal(t.JSON())
	if err != nil {
		return nil, fmt.Errorf("definition of %s: %w", t.Name, err)
	}
	return b, nil
}

// EncodeCalendar returns the stored form of a named calendar.
func EncodeCalendar(c *job.Calendar) ([]byte, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("calendar %s: %w", c.Name, err)
	}
	return b, nil
}

// DecodeCalendar reads the stored form of a named calendar.
func DecodeCalendar(b []byte) (job.Calendar, error) {
	var c job.Calendar
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("calendar: %w", err)
	}
	return c, nil
}

// EncodeState returns the stored form of a task's state.
func EncodeState(st *job.State) ([]byte, error) { return json.Marshal(st) }

// TaskDecoder decodes stored tasks (definition and state) on every CPU, in
// chunks, into their place in the order they were added. Add is called
// from one goroutine; Wait returns the records, or the error of the first
// task, by position, that could not be decoded.
type TaskDecoder struct {
	recs  []job.Record
	errs  []error // by chunk
	work  chan decodeChunk
	wg    sync.WaitGroup
	chunk decodeChunk
	n     int
}

type decodeChunk struct {
	first      int
	def, state [][]byte
}

// decodeChunkSize is how many tasks a worker decodes at a time.
const decodeChunkSize = 512

// NewTaskDecoder returns a decoder for n tasks.
func NewTaskDecoder(n int) *TaskDecoder {
	d := &TaskDecoder{recs: make([]job.Record, n), errs: make([]error, (n+decodeChunkSize-1)/decodeChunkSize),
		work: make(chan decodeChunk, 2*runtime.NumCPU())}
	for range runtime.NumCPU() {
		d.wg.Add(1)
		go d.decode()
	}
	return d
}

// Add queues the stored definition and state of the next task. It keeps
// both slices until Wait returns.
func (d *TaskDecoder) Add(def, state []byte) error {
	if d.n >= len(d.recs) {
		return fmt.Errorf("more than the %d tasks counted", len(d.recs))
	}
	d.chunk.def, d.chunk.state = append(d.chunk.def, def), append(d.chunk.state, state)
	if d.n++; len(d.chunk.def) == decodeChunkSize {
		d.work <- d.chunk
		d.chunk = decodeChunk{first: d.n}
	}
	return nil
}

// Wait waits for every task added to be decoded. It is called once.
func (d *TaskDecoder) Wait() ([]job.Record, error) {
	if len(d.chunk.def) > 0 {
		d.work <- d.chunk
	}
	close(d.work)
	d.wg.Wait()
	for _, err := range d.errs {
		if err != nil {
			return nil, err
		}
	}
	if d.n != len(d.recs) {
		return nil, fmt.Errorf("%d tasks read, %d counted", d.n, len(d.recs))
	}
	return d.recs, nil
}

func (d *TaskDecoder) decode() {
	defer d.wg.Done()
	in := interner{}
	var j job.TaskJSON
	for c := range d.work {
		defs := make([]job.Task, len(c.def)) // one allocation per chunk
		for i := range c.def {
			rec := &d.recs[c.first+i]
			rec.Def = &defs[i]
			j = job.TaskJSON{} // nothing shared with the previous task
			err := json.Unmarshal(c.def[i], &j)
			j.Into(rec.Def)
			in.task(rec.Def)
			rec.Def.PackStrings()
			if err != nil {
				err = fmt.Errorf("task %d: definition: %w", c.first+i+1, err)
			} else if err = json.Unmarshal(c.state[i], &rec.State); err != nil {
				err = fmt.Errorf("task %s: state: %w", rec.Def.Name, err)
			}
			if err != nil {
				d.errs[c.first/decodeChunkSize] = err
				break // the first of the chunk is the first by position
			}
		}
	}
}

// interner shares the strings that many definitions repeat (commands,
// log files, zones) among the tasks one goroutine decodes.
type interner map[string]string

func (in interner) str(p *string) {
	if *p == "" {
		return
	}
	if v, ok := in[*p]; ok {
		*p = v
	} else if len(in) < 1<<16 {
		in[*p] = *p
	}
}

func (in interner) task(t *job.Task) {
	for _, c := range [...]job.Type{job.Callable, job.Bundle, job.Configuration, job.Group, job.Resource} {
		if t.Type == c {
			t.Type = c // the constant's bytes, not a copy
			break
		}
	}
	in.str(&t.Command)
	in.str(&t.OutLog)
	in.str(&t.ErrLog)
	in.str(&t.Parent)
	in.str(&t.Timezone)
	if x := t.Extra; x != nil {
		in.str(&x.Profile)
		in.str(&x.Owner)
		in.str(&x.Machine)
		in.str(&x.Function)
	}
}

// partGroup is how a checkpoint part holds the timestamps of one
// dependency of one configuration.
type partGroup struct {
	Task string  `json:"task"`
	Dep  string  `json:"dep"`
	TS   []int64 `json:"ts"` // unix nanoseconds
}

// AppendCheckpointPart appends the stored form of a checkpoint part: a
// JSON array with a group for each run of rows of one dependency of one
// configuration.
func AppendCheckpointPart(b []byte, rows []job.Validation) []byte {
	b = append(b, '[')
	for i, v := range rows {
		if i == 0 || v.Task != rows[i-1].Task || v.Dep != rows[i-1].Dep {
			if i > 0 {
				b = append(b, "]},"...)
			}
			b = append(b, `{"task":`...)
			b = jsonenc.AppendString(b, v.Task)
			b = append(b, `,"dep":`...)
			b = jsonenc.AppendString(b, v.Dep)
			b = append(b, `,"ts":[`...)
		} else {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v.TS.UnixNano(), 10)
	}
	if len(rows) > 0 {
		b = append(b, "]}"...)
	}
	return append(b, ']')
}

// DecodeCheckpointPart appends to rows the validations of a stored
// checkpoint part.
func DecodeCheckpointPart(rows []job.Validation, body []byte) ([]job.Validation, error) {
	var groups []partGroup
	if err := json.Unmarshal(body, &groups); err != nil {
		return rows, err
	}
	for _, g := range groups {
		for _, ts := range g.TS {
			rows = append(rows, job.Validation{Task: g.Task, Dep: g.Dep, TS: time.Unix(0, ts).UTC()})
		}
	}
	return rows, nil
}

// EncodeScope is a token's scope as the tokens table holds it: one pattern
// a line, empty for every task. Patterns hold no line breaks (see
// auth.ParseScope).
func EncodeScope(s auth.Scope) string { return strings.Join(s, "\n") }

// DecodeScope reads a scope EncodeScope wrote.
func DecodeScope(s string) auth.Scope {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// EncodeOwners is a token's owners as the tokens table holds them: one
// pattern a line, empty for none given. Patterns hold no line breaks (see
// auth.ParseOwners).
func EncodeOwners(o auth.Owners) string { return strings.Join(o, "\n") }

// DecodeOwners reads owners EncodeOwners wrote.
func DecodeOwners(s string) auth.Owners {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// EncodeLogSpan returns a run's log span as a column holds it: its four
// offsets, comma-separated (out from, out to, err from, err to), then
// the worker's node when a cluster's worker ran it (a node's name has no
// comma), then, when they are known, the identities of the out and err
// files (after the node, empty if none); "" for no span.
func EncodeLogSpan(s *job.LogSpan) string {
	if s == nil {
		return ""
	}
	out := fmt.Sprintf("%d,%d,%d,%d", s.OutFrom, s.OutTo, s.ErrFrom, s.ErrTo)
	if s.OutFile != 0 || s.ErrFile != 0 {
		return out + fmt.Sprintf(",%s,%d,%d", s.Node, s.OutFile, s.ErrFile)
	}
	if s.Node != "" {
		out += "," + s.Node
	}
	return out
}

// DecodeLogSpan reads a log span column written by EncodeLogSpan.
func DecodeLogSpan(s string) (*job.LogSpan, error) {
	if s == "" {
		return nil, nil
	}
	var v [4]int64
	parts := strings.Split(s, ",")
	var files []uint64
	if len(parts) == len(v)+3 {
		// The files' identities follow the node (perhaps empty).
		for _, p := range parts[len(v)+1:] {
			n, err := strconv.ParseUint(p, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("log span %q: file %q", s, p)
			}
			files = append(files, n)
		}
		if parts[len(v)] == "" {
			parts = parts[:len(v)]
		} else {
			parts = parts[:len(v)+1]
		}
	} else if len(parts) != len(v) && (len(parts) != len(v)+1 || parts[len(v)] == "") {
		return nil, fmt.Errorf("log span %q: want four offsets, and a node's name or nothing, then the files' identities or nothing", s)
	}
	for i, p := range parts[:len(v)] {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < -1 {
			return nil, fmt.Errorf("log span %q: offset %q", s, p)
		}
		v[i] = n
	}
	span := &job.LogSpan{OutFrom: v[0], OutTo: v[1], ErrFrom: v[2], ErrTo: v[3]}
	if len(parts) > len(v) {
		span.Node = parts[len(v)]
	}
	if files != nil {
		span.OutFile, span.ErrFile = files[0], files[1]
	}
	return span, nil
}

// EncodeParams returns a run's parameters as a column holds them: a JSON
// array of {"name","value"} objects, ” when none.
func EncodeParams(ps []job.Var) string {
	if len(ps) == 0 {
		return ""
	}
	b, err := json.Marshal(ps)
	if err != nil {
		panic("store: parameters: " + err.Error()) // strings always encode
	}
	return string(b)
}

// DecodeParams reads a parameters column written by EncodeParams.
func DecodeParams(s string) ([]job.Var, error) {
	if s == "" {
		return nil, nil
	}
	var ps []job.Var
	if err := json.Unmarshal([]byte(s), &ps); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	return ps, nil
}
