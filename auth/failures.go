package auth

import (
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

// Failures slows down the sources of failed authentication (a client's
// address): bad bearer tokens, bad certificates, failed sign-ins. A source
// gets FreeFailures failures, then waits before each next attempt, a
// second after the first failure beyond them, doubling up to MaxBackoff;
// a source without a failure for ForgetAfter starts again. While it waits,
// its attempts are refused before any check. Each source's failures are
// reported at most once a minute.
type Failures struct {
	clock clock.Clock

	mu      sync.Mutex
	sources map[string]*failures
}

// The limits of Failures.
const (
	FreeFailures = 10
	MaxBackoff   = time.Minute
	ForgetAfter  = 10 * time.Minute
	maxSources   = 100_000
)

type failures struct {
	count    int
	last     time.Time
	until    time.Time // no attempt before
	reported time.Time
}

// NewFailures returns an empty record on clock c (clock.Wall on a server:
// waits are real time).
func NewFailures(c clock.Clock) *Failures {
	return &Failures{clock: c, sources: map[string]*failures{}}
}

// Wait returns how long a source must wait before its next attempt: 0
// when it may try now.
func (f *Failures) Wait(source string) time.Duration {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sources[source]
	if s == nil || !now.Before(s.until) {
		return 0
	}
	return s.until.Sub(now)
}

// Fail records a failed attempt of a source. It returns how many failures
// the source has, and whether to report them (once a minute a source).
func (f *Failures) Fail(source string) (count int, report bool) {
	now := f.clock.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.sources[source]
	if s != nil && now.Sub(s.last) >= ForgetAfter {
		s = nil
	}
	if s == nil {
		if len(f.sources) >= maxSources {
			f.forget(now)
		}
		s = &failures{}
		f.sources[source] = s
	}
	s.count++
	s.last = now
	if over := s.count - FreeFailures; over > 0 {
		backoff := MaxBackoff
		if over < 7 {
			backoff = min(MaxBackoff, time.Second<<(over-1))
		}
		s.until = now.Add(backoff)
	}
	if now.Sub(s.reported) >= time.Minute {
		s.reported = now
		return s.count, true
	}
	return s.count, false
}

// forget drops the sources without a recent failure, or all of them when
// every one has one (a flood of sources must not grow the record).
func (f *Failures) forget(now time.Time) {
	for k, s := range f.sources {
		if now.Sub(s.last) >= ForgetAfter {
			delete(f.sources, k)
		}
	}
	if len(f.sources) >= maxSources {
		clear(f.sources)
	}
}
