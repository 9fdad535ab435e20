package job

import (
	"testing"
	"time"
)

func TestAuditLine(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		rec  AuditRecord
		want string
	}{
		{"no identity", AuditRecord{Task: "a", Launch: t0, Stop: t0.Add(time.Minute), Result: ResultNormal, Status: Success},
			"a : 2026-03-01T12:00:00Z : 2026-03-01T12:01:00Z : normal : success"},
		{"started by a call", AuditRecord{Task: "a", Launch: t0, Stop: t0, Result: ResultKilled, Status: Aborted, By: "alice"},
			"a : 2026-03-01T12:00:00Z : 2026-03-01T12:00:00Z : abnormal : aborted : by alice"},
		{"ended by a call", AuditRecord{Task: "a", Launch: t0, Stop: t0, Result: ResultKilled, Status: Aborted, By: "bob", EndedBy: "alice"},
			"a : 2026-03-01T12:00:00Z : 2026-03-01T12:00:00Z : abnormal : aborted : by bob : ended by alice"},
		{"ended by a call, started by none", AuditRecord{Task: "a", Launch: t0, Stop: t0, Result: ResultKilled, Status: Aborted, EndedBy: "alice"},
			"a : 2026-03-01T12:00:00Z : 2026-03-01T12:00:00Z : abnormal : aborted : ended by alice"},
		{"message and data", AuditRecord{Task: "a", Launch: t0, Stop: t0, Result: ResultNormal, Status: Failure, Message: "disk\nfull",
			Data: map[string]string{"rows": "3", "b": "x y"}, By: "feed"},
			"a : 2026-03-01T12:00:00Z : 2026-03-01T12:00:00Z : normal : failure: disk full [b=x y rows=3] : by feed"},
		// A message cannot pass for more fields.
		{"separator in the message", AuditRecord{Task: "a", Launch: t0, Stop: t0, Result: ResultNormal, Status: Failure,
			Message: "ok : by admin : ended by root", Data: map[string]string{"k": "v : w"}},
			`a : 2026-03-01T12:00:00Z : 2026-03-01T12:00:00Z : normal : failure: ok \: by admin \: ended by root [k=v \: w]`},
		{"separator after the status", AuditRecord{Task: "a", Launch: t0, Stop: t0, Result: ResultNormal, Status: Failure,
			Message: ": : by admin"}, `a : 2026-03-01T12:00:00Z : 2026-03-01T12:00:00Z : normal : failure: \: \: by admin`},
		// What a terminal would obey is written escaped: cat audit.log
		// shows it and obeys none of it.
		{"escapes", AuditRecord{Task: "a", Launch: t0, Stop: t0, Result: ResultNormal, Status: Failure,
			Message: "\x1b[2J\x1b]0;pwned\x07 \u202eevil \xff", Data: map[string]string{"k": "\x1b[31mred"}},
			`a : 2026-03-01T12:00:00Z : 2026-03-01T12:00:00Z : normal : failure: \x1b[2J\x1b]0;pwned\x07 \u202eevil \xff [k=\x1b[31mred]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.rec.Line(time.UTC); got != tc.want {
				t.Errorf("Line =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}
