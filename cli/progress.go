package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/gnomon-sched/gnomon/clock"
)

// Progress of a command that takes long: after progressAfter, on a
// terminal only, a line on stderr says what the command waits for and for
// how long, rewritten in place every progressEvery; it is erased when the
// command ends. Piped or redirected, the command prints nothing more.
const (
	progressAfter = 2 * time.Second
	progressEvery = 500 * time.Millisecond
)

// isTerminal reports whether w is a terminal: a character device. It is
// Env.IsTerminal when that is nil.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// withProgress runs work, and while it runs longer than progressAfter
// shows on env.Stderr, when it is a terminal, what status says (called
// from another goroutine; it may ask the server, within its context) and
// the time spent.
func withProgress(ctx context.Context, env *Env, what string, status func(context.Context) string, work func() error) error {
	terminal := env.IsTerminal
	if terminal == nil {
		terminal = isTerminal
	}
	if !terminal(env.Stderr) {
		return work()
	}
	start := clock.Wall.Now()
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		shown := false
		defer func() {
			if shown {
				fmt.Fprint(env.Stderr, "\r\x1b[K") // erase the line
			}
		}()
		timer := time.NewTimer(progressAfter)
		defer timer.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			line := what
			if status != nil {
				if s := status(ctx); s != "" {
					line += ": " + s
				}
			}
			if ctx.Err() != nil {
				return
			}
			fmt.Fprintf(env.Stderr, "\r\x1b[K%s (%s)", line, clock.Wall.Now().Sub(start).Round(time.Second))
			shown = true
			timer.Reset(progressEvery)
		}
	}()
	err := work()
	cancel()
	wg.Wait()
	return err
}
