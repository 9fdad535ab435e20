package job

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

// AuditRecord is the audit trail's record of one ended run (seed 004):
// finished, killed, lost or failed to launch.
type AuditRecord struct {
	Seq     int64     `json:"seq"` // assigned by the store, in commit order
	Task    string    `json:"task"`
	RunID   int64     `json:"run_id"`
	Launch  time.Time `json:"launch"`
	Stop    time.Time `json:"stop"`
	Result  Result    `json:"result"`
	Status  Status    `json:"status"`
	Message string    `json:"message,omitempty"`
	// Data is the message data the run reported.
	Data map[string]string `json:"data,omitempty"`
	// By names the identity whose API call started the run (Run.By),
	// empty if none did.
	By string `json:"by,omitempty"`
	// EndedBy names the identity whose API call ended the run
	// (Run.EndedBy), empty if it ended on its own.
	EndedBy string `json:"ended_by,omitempty"`
}

// AuditOf returns the audit record of an ended run.
func AuditOf(r *Run) AuditRecord {
	return AuditRecord{Task: r.Task, RunID: r.ID, Launch: r.Start, Stop: r.End, Result: r.Result, Status: r.Status, Message: r.Message, Data: r.Data,
		By: r.By, EndedBy: r.EndedBy}
}

// Normal reports whether the run completed by itself: the scheduler result
// "normal" of the audit line, as opposed to "abnormal" (killed, shut down,
// lost, failed to launch, internal error).
func (a AuditRecord) Normal() bool { return a.Result == ResultNormal || a.Result == "" }

// Line renders the record as a line of audit.log, without the newline:
//
//	NAME : LAUNCH : STOP : RESULT : STATUS[ : by IDENTITY][ : ended by IDENTITY]
//
// with instants in RFC 3339 in loc, RESULT normal or abnormal, and STATUS
// the run's status, then its message after a colon when it has one, then
// its message data as key=value pairs in key order, in brackets. The
// field after names the identity whose API call started the run, and the
// last the identity whose API call ended it (Run.EndedBy); each is left
// out when no call did, so that the five fields keep their places.
//
// Line breaks are written as spaces, so that a record is a line, and a
// field separator " : " in the message or data as " \: ", so that the
// fields of a line are those of its record. A
// message or data may hold what a terminal obeys (an escape sequence, a
// bidirectional override) or bytes that are not UTF-8: those are written
// as escapes (termsafe.String), so that the file can be read with cat.
func (a AuditRecord) Line(loc *time.Location) string {
	result := "normal"
	if !a.Normal() {
		result = "abnormal"
	}
	status := a.Status.String()
	if a.Message != "" {
		status += ": " + strings.Join(strings.Fields(a.Message), " ")
	}
	if len(a.Data) > 0 {
		kv := make([]string, 0, len(a.Data))
		for _, k := range slices.Sorted(maps.Keys(a.Data)) {
			kv = append(kv, k+"="+a.Data[k])
		}
		status += " [" + strings.Join(strings.Fields(strings.Join(kv, " ")), " ") + "]"
	}
	// A message or data that holds the field separator would read as more
	// fields (" : by admin"): the separator is written \: there.
	for strings.Contains(status, " : ") {
		status = strings.ReplaceAll(status, " : ", ` \: `)
	}
	const layout = "2006-01-02T15:04:05Z07:00"
	line := fmt.Sprintf("%s : %s : %s : %s : %s", a.Task, a.Launch.In(loc).Format(layout), a.Stop.In(loc).Format(layout), result, status)
	if a.By != "" {
		line += " : by " + a.By
	}
	if a.EndedBy != "" {
		line += " : ended by " + a.EndedBy
	}
	return termsafe.String(line)
}
