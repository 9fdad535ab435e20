package calendar

import (
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// Next is what the engine calls after every fire and for every task at
// start-up.
func BenchmarkNext(b *testing.B) {
	ny, _ := time.LoadLocation("America/New_York")
	cron, _ := ParseCron("*/15 9-17 * * mon-fri", ny)
	iv, _ := IntervalOf("2026-01-31 09:00", "", "1 month", ny)
	for name, s := range map[string]Schedule{
		"batch":    NewBatch(0x3e, []job.Clock{6 * 60, 18*60 + 30}, ny),
		"window":   NewWindow(0, job.Window{Start: 23 * 60, End: 60}, []int{0, 30}, ny),
		"cron":     cron,
		"interval": iv,
	} {
		b.Run(name, func(b *testing.B) {
			at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			for b.Loop() {
				n, ok := s.Next(at)
				if !ok {
					b.Fatal("never")
				}
				at = n
			}
		})
	}
}
