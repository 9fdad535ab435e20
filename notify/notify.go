// Package notify renders and sends email alerts (seed 004) over SMTP.
//
// An alert is rendered with Go text/template from the fields the seed
// names (JobName, JobStatus) and the run's: Start, End, ExitCode, Message,
// RunID, Recipients, and the run's message data, both as .Data and as
// top-level fields (a data field never hides a built-in one).
package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"text/template"
	"time"

	mail "github.com/wneessen/go-mail"

	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/job"
)

// DefaultSubject is the subject template used when none is configured.
const DefaultSubject = `gnomon: {{.JobName}} {{.JobStatus}}`

// DefaultTemplate is the body template of alerts whose task or group
// names none.
const DefaultTemplate = `Job {{.JobName}}: {{.JobStatus}}.
{{if .RunID}}
Run:       {{.RunID}}
Started:   {{.Start.Format "2006-01-02 15:04:05 MST"}}
Ended:     {{.End.Format "2006-01-02 15:04:05 MST"}}
Exit code: {{.ExitCode}}
{{end}}{{with .Message}}
{{.}}
{{end}}{{with .Data}}
Message data:
{{range $k, $v := .}}  {{$k}}: {{$v}}
{{end}}{{end}}`

// TLS policies for the SMTP connection.
const (
	TLSOpportunistic = "opportunistic" // STARTTLS when the server offers it
	TLSMandatory     = "mandatory"     // refuse to send without STARTTLS
	TLSNone          = "none"          // never STARTTLS
)

// Config is how alerts are sent.
type Config struct {
	// Addr is the SMTP server, host:port. Empty disables sending.
	Addr string
	From string
	// Subject is a template of the subject line; empty means
	// DefaultSubject.
	Subject string
	// TLS is one of the TLS policies; empty means TLSOpportunistic.
	TLS string
	// Username and Password authenticate (AUTH PLAIN or LOGIN, as offered)
	// when Username is set.
	Username, Password string
	// Timeout bounds one conversation; zero means 30s.
	Timeout time.Duration
	// Location is the zone of the times shown; nil means UTC.
	Location *time.Location
	// Clock is the clock of the Date header; nil means clock.System. A
	// simulating scheduler passes its virtual clock.
	Clock clock.Clock
}

// Mailer sends alerts.
type Mailer struct {
	cfg     Config
	host    string
	port    int
	subject *template.Template
	def     *template.Template
}

// New checks a configuration and returns a Mailer.
func New(cfg Config) (*Mailer, error) {
	if cfg.Subject == "" {
		cfg.Subject = DefaultSubject
	}
	if cfg.TLS == "" {
		cfg.TLS = TLSOpportunistic
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Location == nil {
		cfg.Location = time.UTC
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System{}
	}
	m := &Mailer{cfg: cfg}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("smtp address %q: want host:port", cfg.Addr)
	}
	if m.port, err = strconv.Atoi(port); err != nil || m.port <= 0 || m.port > 65535 {
		return nil, fmt.Errorf("smtp address %q: bad port", cfg.Addr)
	}
	m.host = host
	if cfg.From == "" {
		return nil, errors.New("smtp: a sender address is required")
	}
	if err := mail.NewMsg().From(cfg.From); err != nil {
		return nil, fmt.Errorf("smtp sender %q: %w", cfg.From, err)
	}
	switch cfg.TLS {
	case TLSOpportunistic, TLSMandatory, TLSNone:
	default:
		return nil, fmt.Errorf("smtp TLS policy %q: want opportunistic, mandatory or none", cfg.TLS)
	}
	if m.subject, err = template.New("subject").Option("missingkey=zero").Parse(cfg.Subject); err != nil {
		return nil, fmt.Errorf("smtp subject: %w", err)
	}
	m.def = template.Must(template.New("default").Option("missingkey=zero").Parse(DefaultTemplate))
	return m, nil
}

// Fields returns what an alert's templates see.
func Fields(a *job.Alert, loc *time.Location) map[string]any {
	f := map[string]any{}
	for k, v := range a.Data {
		f[k] = v
	}
	status := strings.ReplaceAll(string(a.Outcome), "_", " ")
	for k, v := range map[string]any{
		"JobName": a.Task, "JobStatus": status, "Outcome": string(a.Outcome), "RunID": a.RunID,
		"Start": a.Start.In(loc), "End": a.End.In(loc), "ExitCode": a.ExitCode, "Message": a.Message,
		"Data": a.Data, "Recipients": a.To, "Created": a.Created.In(loc),
	} {
		f[k] = v
	}
	return f
}

// Render returns an alert's subject and body. A template file that cannot
// be read or executed is an error: the caller records it.
func (m *Mailer) Render(a *job.Alert) (subject, body string, err error) {
	f := Fields(a, m.cfg.Location)
	var sb, bb strings.Builder
	if err := m.subject.Execute(&sb, f); err != nil {
		return "", "", fmt.Errorf("subject template: %w", err)
	}
	t := m.def
	if a.Template != "" {
		text, err := os.ReadFile(a.Template)
		if err != nil {
			return "", "", fmt.Errorf("alert template: %w", err)
		}
		if t, err = template.New(a.Template).Option("missingkey=zero").Parse(string(text)); err != nil {
			return "", "", fmt.Errorf("alert template: %w", err)
		}
	}
	if err := t.Execute(&bb, f); err != nil {
		return "", "", fmt.Errorf("alert template %s: %w", a.Template, err)
	}
	return strings.Join(strings.Fields(sb.String()), " "), bb.String(), nil
}

// Send renders and sends one alert. A returned error is Permanent when
// retrying cannot help (the server refused the message for good, or the
// template is broken).
func (m *Mailer) Send(ctx context.Context, a *job.Alert) error {
	subject, body, err := m.Render(a)
	if err != nil {
		return Permanent{err}
	}
	msg := mail.NewMsg()
	if err := msg.From(m.cfg.From); err != nil {
		return Permanent{err}
	}
	if err := msg.To(a.To...); err != nil {
		return Permanent{err}
	}
	msg.Subject(subject)
	msg.SetDateWithValue(m.cfg.Clock.Now().In(m.cfg.Location))
	msg.SetMessageID()
	msg.SetGenHeader(mail.HeaderXMailer, "gnomon")
	msg.SetBodyString(mail.TypeTextPlain, body)
	policy := map[string]mail.TLSPolicy{TLSOpportunistic: mail.TLSOpportunistic, TLSMandatory: mail.TLSMandatory, TLSNone: mail.NoTLS}[m.cfg.TLS]
	opts := []mail.Option{mail.WithPort(m.port), mail.WithTLSPolicy(policy), mail.WithTimeout(m.cfg.Timeout), mail.WithoutNoop()}
	if m.cfg.Username != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(m.cfg.Username), mail.WithPassword(m.cfg.Password))
	}
	c, err := mail.NewClient(m.host, opts...)
	if err != nil {
		return Permanent{err}
	}
	ctx, cancel := context.WithTimeout(ctx, m.cfg.Timeout)
	defer cancel()
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		var se *mail.SendError
		if errors.As(err, &se) && !se.IsTemp() && se.ErrorCode() >= 500 {
			return Permanent{err}
		}
		return err
	}
	return nil
}

// Permanent marks an error that retrying cannot fix.
type Permanent struct{ Err error }

func (p Permanent) Error() string { return p.Err.Error() }
func (p Permanent) Unwrap() error { return p.Err }

// Permanent reports true: the scheduler gives up on the alert at once
// (scheduler.IsPermanent).
func (Permanent) Permanent() bool { return true }
