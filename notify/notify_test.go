package notify

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/internal/smtptest"
	"github.com/gnomon-sched/gnomon/job"
)

var alert = job.Alert{
	Task: "load", Outcome: job.OutcomeFailure, RunID: 7, To: []string{"ops@example.com"},
	Start: time.Date(2026, 3, 1, 1, 0, 0, 0, time.UTC), End: time.Date(2026, 3, 1, 1, 0, 5, 0, time.UTC),
	ExitCode: 3, Message: "3 rows rejected", Data: map[string]string{"rows": "1200", "JobName": "hidden"},
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Addr: "localhost", From: "g@example.com"}, "want host:port"},
		{Config{Addr: "localhost:0", From: "g@example.com"}, "bad port"},
		{Config{Addr: "localhost:25"}, "a sender address is required"},
		{Config{Addr: "localhost:25", From: "not an address"}, `smtp sender "not an address"`},
		{Config{Addr: "localhost:25", From: "g@example.com", TLS: "sometimes"}, `TLS policy "sometimes"`},
		{Config{Addr: "localhost:25", From: "g@example.com", Subject: "{{.JobName"}, "smtp subject"},
	} {
		if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want %q", tt.cfg, err, tt.want)
		}
	}
}

func TestRender(t *testing.T) {
	t.Parallel()
	paris, _ := time.LoadLocation("Europe/Paris")
	m, err := New(Config{Addr: "localhost:25", From: "g@example.com", Location: paris})
	if err != nil {
		t.Fatal(err)
	}
	subject, body, err := m.Render(&alert)
	if err != nil {
		t.Fatal(err)
	}
	if subject != "gnomon: load failure" {
		t.Errorf("subject %q", subject)
	}
	for _, frag := range []string{"Job load: failure.", "Run:       7", "Started:   2026-03-01 02:00:00 CET", "Exit code: 3", "3 rows rejected", "  rows: 1200"} {
		if !strings.Contains(body, frag) {
			t.Errorf("default body lacks %q:\n%s", frag, body)
		}
	}
	// A template file sees the data fields by name, and built-in fields
	// win over data fields of the same name.
	tmpl := filepath.Join(t.TempDir(), "t.tmpl")
	os.WriteFile(tmpl, []byte("{{.JobName}} {{.JobStatus}} {{.rows}} {{.Data.rows}} {{.missing}}."), 0o644)
	a := alert
	a.Template = tmpl
	if _, body, err = m.Render(&a); err != nil || body != "load failure 1200 1200 <no value>." {
		t.Errorf("template body %q, %v", body, err)
	}
	a.Template = filepath.Join(t.TempDir(), "missing.tmpl")
	if _, _, err := m.Render(&a); err == nil || !strings.Contains(err.Error(), "alert template") {
		t.Errorf("missing template: %v", err)
	}
}

func TestSend(t *testing.T) {
	t.Parallel()
	mb := smtptest.Start(t, "127.0.0.1:0")
	mb.Refuse = map[string]bool{"gone@example.com": true}
	m, err := New(Config{Addr: mb.Addr, From: "gnomon@example.com", Subject: "[{{.JobStatus}}] {{.JobName}} run {{.RunID}}"})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Send(context.Background(), &alert); err != nil {
		t.Fatal(err)
	}
	got := mb.Wait(t, 1)[0]
	if got.Subject != "[failure] load run 7" || got.From != "gnomon@example.com" || len(got.To) != 1 || got.To[0] != "ops@example.com" {
		t.Errorf("received %+v", got)
	}
	a := alert
	a.To = []string{"gone@example.com"}
	var perm Permanent
	if err := m.Send(context.Background(), &a); !errors.As(err, &perm) {
		t.Errorf("a refused recipient: %v (%T), want a permanent error", err, err)
	}
	// Nobody listening: a temporary error, to retry.
	m2, _ := New(Config{Addr: smtptest.FreeAddr(t), From: "gnomon@example.com", Timeout: 5 * time.Second})
	if err := m2.Send(context.Background(), &alert); err == nil || errors.As(err, &perm) {
		t.Errorf("server down: %v, want a temporary error", err)
	}
	mb2 := smtptest.Start(t, "127.0.0.1:0")
	m3, _ := New(Config{Addr: mb2.Addr, From: "gnomon@example.com", TLS: TLSMandatory})
	if err := m3.Send(context.Background(), &alert); err == nil {
		t.Error("sent without STARTTLS under the mandatory policy")
	}
}
