package clock_test

import (
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

func TestFunc(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var c clock.Clock = clock.Func(func() time.Time { return at })
	if got := c.Now(); !got.Equal(at) {
		t.Errorf("Func.Now() = %s, want %s", got, at)
	}
}
