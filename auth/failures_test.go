package auth

import (
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

// A source waits after its free failures, twice as long at each further
// one up to MaxBackoff, and starts again after ForgetAfter without one;
// other sources are not slowed, and each source is reported once a minute.
func TestFailuresBackOff(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	f := NewFailures(clock.Func(func() time.Time { return now }))
	reports := 0
	for range FreeFailures {
		if _, report := f.Fail("10.0.0.1"); report {
			reports++
		}
		if w := f.Wait("10.0.0.1"); w != 0 {
			t.Fatalf("within the free failures a source waits %s", w)
		}
	}
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute} {
		if _, report := f.Fail("10.0.0.1"); report {
			reports++
		}
		if w := f.Wait("10.0.0.1"); w != want {
			t.Errorf("after %d failures beyond the free ones: wait %s, want %s", i+1, w, want)
		}
	}
	if reports != 1 {
		t.Errorf("%d reports within a minute, want 1", reports)
	}
	if w := f.Wait("10.0.0.2"); w != 0 {
		t.Errorf("another source waits %s", w)
	}
	now = now.Add(ForgetAfter)
	if w := f.Wait("10.0.0.1"); w != 0 {
		t.Errorf("after %s: wait %s", ForgetAfter, w)
	}
	if n, report := f.Fail("10.0.0.1"); n != 1 || !report {
		t.Errorf("a failure after %s: count %d, report %v; want a fresh start", ForgetAfter, n, report)
	}
}
