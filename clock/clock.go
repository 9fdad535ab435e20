// Package clock is the one place gnomon reads the time from. Every part
// that needs the time is given a Clock, or reads Wall by name; nothing
// outside this package calls time.Now to decide or record something.
//
// There are two clocks, and each part says which one it reads:
//
//   - The Clock a part is given is the clock of decisions and records:
//     the scheduler's. It says when occurrences are due, and stamps runs,
//     their outcomes, fires, alerts and the Date of mail. It is System
//     on a real server and a virtual clock (scheduler.VirtualClock) on a
//     simulating one. The scheduler's loop, alert retries and retention,
//     the executor's records of runs, notify, and a cluster's dispatch
//     and feed read it.
//   - Wall is the clock of liveness, and is never virtual: leases and
//     heartbeats of a cluster's nodes, taking over as director, the
//     expiry and rate limits of credentials, timeouts, how long idle
//     supervisors linger, and the elapsed times that logs and metrics
//     report. A simulating server still keeps its leases, tokens and
//     processes in real time.
//
// A cluster node is given one Clock for both: the scheduler's when it
// runs in real time, and Wall when the director simulates, in which case
// occurrences are found by the virtual clock the director saves in the
// store (see cluster.Config).
package clock

import "time"

// Clock tells the time. Implementations are safe for concurrent use.
type Clock interface{ Now() time.Time }

// System is the real clock. Its zero value is ready to use.
type System struct{}

// Now returns the current time, with its monotonic reading.
func (System) Now() time.Time { return time.Now() }

// Wall is the clock of liveness: leases, heartbeats, timeouts, credential
// expiry and elapsed times. It is always the real clock, even on a
// scheduler that simulates.
var Wall System

// Func adapts a function to a Clock, for callers and tests that hold the
// time in a function.
type Func func() time.Time

// Now returns f().
func (f Func) Now() time.Time { return f() }

var (
	_ Clock = System{}
	_ Clock = Func(nil)
)
