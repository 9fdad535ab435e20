package cli

import (
	"context"
	"net/smtp"
	"strings"
	"testing"

	"github.com/gnomon-sched/gnomon/internal/smtptest"
)

// TestDevSMTPSink runs gnomon dev smtp-sink, mails it, and stops it: it
// prints a line for the mail, and ends when its context does.
func TestDevSMTPSink(t *testing.T) {
	t.Parallel()
	addr := smtptest.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	done := make(chan int)
	go func() {
		done <- Run(ctx, []string{"gnomon", "dev", "smtp-sink", "--listen", addr}, Env{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }})
	}()
	f := &fixture{t: t}
	f.waitFor("the sink to listen", func() bool { return strings.Contains(errb.String(), "smtp-sink: listening on "+addr) })
	msg := "From: gnomon@example.com\r\nTo: ops@example.com\r\nSubject: nightly failed\r\n\r\nexit code 3\r\n"
	if err := smtp.SendMail(addr, nil, "gnomon@example.com", []string{"ops@example.com", "dba@example.com"}, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	f.waitFor("the mail's line", func() bool {
		return out.String() == "mail from gnomon@example.com to ops@example.com, dba@example.com: nightly failed\n"
	})
	// The address is taken: a second sink says so.
	if _, errs, code := f.run("gnomon", "dev", "smtp-sink", "--listen", addr); code != ExitRejected || !strings.Contains(errs, "smtp-sink: ") ||
		!strings.Contains(errs, "give --listen another address") {
		t.Errorf("a second sink on %s: exit %d, %q", addr, code, errs)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d: %s", code, errb.String())
	}
}
