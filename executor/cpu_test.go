package executor

import (
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRunCPU measures the CPU a short command's run costs the machine
// (this process, its supervisors and the commands they start, user and
// system time), against exec.Command("true").Run() at the same
// concurrency, measured in the same run: the per-run cost that bounds a
// fire storm's drain (BENCHMARKS.md, "Fire storms"). Both run `true`: the
// run's through its supervisor's /bin/sh (true is a builtin of the shell).
func BenchmarkRunCPU(b *testing.B) {
	const workers = 10
	b.Run("exec", func(b *testing.B) {
		spent := cpuOf(b, func() {
			each(b.N, workers, func(int) {
				if err := exec.Command("true").Run(); err != nil {
					b.Error(err)
				}
			})
		})
		b.ReportMetric(float64(spent.Microseconds())/float64(b.N), "µs-cpu/run")
	})
	for _, command := range []string{"true", "/usr/bin/true"} {
		b.Run("executor "+command, func(b *testing.B) {
			dir := b.TempDir()
			logs := &LogFiles{Roots: []string{dir}}
			var mu sync.Mutex
			done := map[int64]chan Exit{}
			x, err := New(Config{Dir: filepath.Join(dir, "runs"), Spares: workers, Keep: workers, Report: func(e Exit) {
				mu.Lock()
				ch := done[e.RunID]
				mu.Unlock()
				ch <- e
			}})
			if err != nil {
				b.Fatal(err)
			}
			spent := cpuOf(b, func() {
				each(b.N, workers, func(i int) {
					id := int64(i + 1)
					ch := make(chan Exit, 1)
					mu.Lock()
					done[id] = ch
					mu.Unlock()
					x.Start(Spec{RunID: id, Task: "t", Command: command, Logs: logs,
						OutLog: filepath.Join(dir, "t.out"), ErrLog: filepath.Join(dir, "t.err")})
					if e := <-ch; e.Code != 0 {
						b.Errorf("run %d: %+v", id, e)
					}
					x.Forget(id)
				})
				// The supervisors' time (and their commands') is counted
				// once they have exited and been waited for.
				x.Stop(context.Background())
				x.Wait()
			})
			b.ReportMetric(float64(spent.Microseconds())/float64(b.N), "µs-cpu/run")
		})
	}
}

// each calls fn(0..n-1) from w goroutines.
func each(n, w int, fn func(int)) {
	var next sync.Mutex
	i := 0
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for {
				next.Lock()
				k := i
				i++
				next.Unlock()
				if k >= n {
					return
				}
				fn(k)
			}
		})
	}
	wg.Wait()
}

// cpuOf returns the CPU time fn costs this process and the children it
// waits for.
func cpuOf(b *testing.B, fn func()) time.Duration {
	total := func() time.Duration {
		var self, kids syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
		return time.Duration(self.Utime.Nano() + self.Stime.Nano() + kids.Utime.Nano() + kids.Stime.Nano())
	}
	before := total()
	b.ResetTimer()
	fn()
	b.StopTimer()
	return total() - before
}
