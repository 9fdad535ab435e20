package cluster

import (
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// The target channel: the runs the director's engine started wait in
// cluster_runs for a worker. A run moves
//
//	queued → claimed → started → ended → (deleted by the director)
//
// A claim raises the run's attempt, and every write of a worker names the
// attempt it holds: a worker whose claim was taken back (it was found
// dead, the run was re-queued or recorded lost) can write nothing more
// about the run, as a clock node that lost its lease can record no fire.

// Channels of notices (Listener; LISTEN/NOTIFY on PostgreSQL): runs were
// queued, runs ended. A notice only wakes a sleeper early: every reader
// also polls.
const (
	NoticeQueued = "gnomon_runs_queued"
	NoticeEnded  = "gnomon_runs_ended"
	// NoticeClock: a simulating director moved its virtual clock.
	NoticeClock = "gnomon_clock_moved"
)

// Run states in cluster_runs.
const (
	Queued  = "queued"
	Claimed = "claimed"
	Started = "started"
	Ended   = "ended"
)

// Claim is a run a worker holds, at the attempt its writes must carry.
type Claim struct {
	Launch  job.Launch
	Attempt int
	// State is Claimed or Started.
	State string
	// Abort is set when the director aborted the run.
	Abort bool
}

// Reclaimed is what Reclaim did with the runs of workers gone.
type Reclaimed struct {
	Runs []Taken
}

// Taken is a run taken back from a worker gone.
type Taken struct {
	Run    int64
	Worker string
	// State is the worker's: dead or left.
	State string
	// Lost is set when its command had started (the run is ended lost, or
	// killed if it was aborted); else it was queued again.
	Lost bool
}

// Runs is the target channel as `gnomon cluster` shows it.
type Runs struct {
	// Queued is the number of runs no worker has claimed yet.
	Queued int `json:"queued"`
	// Held are the runs each worker holds (claimed or started).
	Held map[string]int `json:"held"`
	// Waiting are the queued runs for a machine that no live worker
	// serves: they wait until one does.
	Waiting []Waiting `json:"waiting"`
}

// Waiting is a queued run for a machine no live worker serves.
type Waiting struct {
	Run     int64     `json:"run"`
	Task    string    `json:"task"`
	Machine string    `json:"machine"`
	Since   time.Time `json:"since"`
}
