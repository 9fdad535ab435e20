// Package smtptest runs a real SMTP server on the loopback interface for
// tests, and keeps the messages it receives, decoded. gnomon dev smtp-sink
// runs the same server for the README's tours.
package smtptest

import (
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// Mailbox is a real SMTP server on 127.0.0.1 that keeps what it receives.
type Mailbox struct {
	srv *smtp.Server
	// Addr is the server's host:port.
	Addr string
	// Refuse lists recipients the server refuses for good (550), set
	// before the first message.
	Refuse map[string]bool
	// CountOnly, set before the first message, keeps no message: the
	// mailbox only counts them (Count), for a long run whose memory is
	// measured.
	CountOnly bool
	// onMessage, when not nil, is called with each message as it is
	// received.
	onMessage func(Message)

	mu    sync.Mutex
	msgs  []Message
	count int
	got   chan struct{}
}

// Message is one mail as the server received it.
type Message struct {
	From    string
	To      []string // envelope recipients
	Subject string
	Body    string
	// Date is the message's Date header, zero if it has none.
	Date time.Time
}

// Start starts a mailbox on addr ("127.0.0.1:0" for any port), closed
// when the test ends.
func Start(t testing.TB, addr string) *Mailbox {
	t.Helper()
	mb, err := Listen(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mb.Close() })
	return mb
}

// Listen starts a mailbox on addr, until Close; onMessage, when not nil,
// is called with each message as it is received.
func Listen(addr string, onMessage func(Message)) (*Mailbox, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mb := &Mailbox{Addr: ln.Addr().String(), got: make(chan struct{}, 1), onMessage: onMessage}
	mb.srv = smtp.NewServer(mb)
	mb.srv.Domain = "localhost"
	mb.srv.ReadTimeout = 10 * time.Second
	mb.srv.WriteTimeout = 10 * time.Second
	go mb.srv.Serve(ln)
	return mb, nil
}

// Close stops the server.
func (mb *Mailbox) Close() error { return mb.srv.Close() }

// FreeAddr returns a loopback address nothing listens on (yet).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// NewSession implements smtp.Backend.
func (mb *Mailbox) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{mb: mb}, nil }

// Wait waits until the mailbox holds n messages and returns them.
func (mb *Mailbox) Wait(t testing.TB, n int) []Message {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		mb.mu.Lock()
		if len(mb.msgs) >= n {
			out := append([]Message(nil), mb.msgs...)
			mb.mu.Unlock()
			return out
		}
		mb.mu.Unlock()
		select {
		case <-mb.got:
		case <-deadline:
			t.Fatalf("mailbox: %d messages after 20s, want %d", len(mb.All()), n)
		}
	}
}

// Count returns how many messages were received so far.
func (mb *Mailbox) Count() int {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return mb.count
}

// All returns the messages received so far.
func (mb *Mailbox) All() []Message {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]Message(nil), mb.msgs...)
}

type session struct {
	mb   *Mailbox
	from string
	to   []string
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }
func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}
func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.mb.Refuse[to] {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	m, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	var body io.Reader = m.Body
	if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(m.Body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		return err
	}
	date, _ := m.Header.Date()
	msg := Message{From: s.from, To: s.to, Subject: subject, Body: strings.ReplaceAll(string(b), "\r\n", "\n"), Date: date}
	s.mb.mu.Lock()
	s.mb.count++
	if !s.mb.CountOnly {
		s.mb.msgs = append(s.mb.msgs, msg)
	}
	s.mb.mu.Unlock()
	select { // Wait looks again at every signal: one pending is enough
	case s.mb.got <- struct{}{}:
	default:
	}
	if s.mb.onMessage != nil {
		s.mb.onMessage(msg)
	}
	return nil
}
