package executor

import (
	"fmt"
	"os"

	"github.com/gnomon-sched/gnomon/job"
)

// RunStream is what one run wrote to one of its task's log files: the
// part of the file the run appended (see job.LogSpan), its end when that
// is longer than asked, or why it cannot be read.
type RunStream struct {
	Name string `json:"name"` // "out" or "err"
	Path string `json:"path,omitempty"`
	Text string `json:"text,omitempty"`
	// More says that Text is the end of longer output.
	More bool `json:"more,omitempty"`
	// Partial says that where the run's output begins is not known (the
	// run was taken up again after a restart): Text is the end of what
	// precedes its end.
	Partial bool `json:"partial,omitempty"`
	// Size is how many bytes of output the run wrote to the stream so
	// far (up to the end of Text): a reader polling a running run prints
	// the last (Size now - Size before) bytes of Text. It counts from
	// where the run began, or for a Partial stream from the file's
	// start.
	Size    int64  `json:"size,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// RunOutput returns what run id of the task def wrote to its out and err
// logs, at most the last limit bytes of each. span says where (nil: not
// known, and the streams say so); a run of a cluster's worker (span.Node)
// is read only when this machine has the same file.
func (l *LogFiles) RunOutput(def *job.Task, id int64, span *job.LogSpan, limit int64) []RunStream {
	streams := []struct {
		name, path string
		from, to   int64
		file       uint64
	}{{"out", def.OutLog, 0, -1, 0}, {"err", def.ErrLog, 0, -1, 0}}
	if span != nil {
		streams[0].from, streams[0].to, streams[0].file = span.OutFrom, span.OutTo, span.OutFile
		streams[1].from, streams[1].to, streams[1].file = span.ErrFrom, span.ErrTo, span.ErrFile
	}
	out := make([]RunStream, 0, len(streams))
	for _, s := range streams {
		rs := RunStream{Name: s.name, Path: s.path}
		switch {
		case s.path == "":
			rs.Problem = "no " + s.name + " log file is defined"
		case span == nil:
			rs.Problem = fmt.Sprintf("where run %d wrote in %s is not known (a run on another node, or one recorded before runs kept it): the task's log shows the file's end", id, s.path)
		case span.Node != "" && s.to > max(s.from, 0) && !l.holds(s.path, s.to):
			// What the run wrote is in the worker's file; a run that
			// wrote nothing needs no file to show it.
			rs.Problem = fmt.Sprintf("run %d ran on worker %s: its %s log is in %s on %s's machine, which this server cannot read (it can when it shares the file with the worker: the worker on this machine, or the log on a shared filesystem)",
				id, span.Node, s.name, s.path, span.Node)
		case s.file != 0 && s.to > max(s.from, 0) && !l.located(&s.path, s.file):
			rs.Problem = fmt.Sprintf("run %d wrote to %s, rotated away since: neither it nor a rotated file %s.N is the file the run wrote to", id, s.path, s.path)
		default:
			// The file's size first, so that Text ends where Size says
			// while the run still writes.
			size, err := l.Size(s.path)
			if err != nil {
				rs.Problem = err.Error()
				break
			}
			to := s.to
			if to < 0 || to > size {
				to = size
			}
			data, more, err := l.Part(s.path, max(s.from, 0), to, limit)
			if err != nil {
				rs.Problem = err.Error()
				break
			}
			rs.Text, rs.More, rs.Partial = string(data), more, s.from < 0
			rs.Size = max(to-max(s.from, 0), 0)
		}
		out = append(out, rs)
	}
	return out
}

// holds reports whether a log file that a cluster's worker wrote to on
// its machine is here too, holding what the run wrote up to to: this
// server reads the same file (the worker runs on this machine, or the log
// is on a filesystem they share). A file missing here, or shorter, is the
// worker's alone.
func (l *LogFiles) holds(path string, to int64) bool {
	p, err := l.Resolve(path)
	if err != nil {
		return false
	}
	fi, err := os.Stat(p)
	return err == nil && fi.Size() >= to
}

// located replaces *path with the file of identity id, itself or one it
// was rotated to, and reports whether there is one.
func (l *LogFiles) located(path *string, id uint64) bool {
	p, ok := l.Locate(*path, id)
	if ok {
		*path = p
	}
	return ok
}
