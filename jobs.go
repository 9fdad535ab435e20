package gnomon

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/scheduler"
	"github.com/gnomon-sched/gnomon/store"
)

// Vocabulary shared with the rest of gnomon.
type (
	// Definition is a job (or group) as gnomon stores it; Job and Group
	// build one.
	Definition = job.Task
	// Status is a job's current status.
	Status = job.Status
	// Action is an operator action (see Scheduler.Send).
	Action = job.Action
	// Outcome is what a run came to, as alerts and listeners name it.
	Outcome = job.Outcome
	// RunRecord is one run in the history.
	RunRecord = job.Run
	// Alert is an email alert and what became of its sending.
	Alert = job.Alert
	// AuditRecord is the audit trail's record of one ended run.
	AuditRecord = job.AuditRecord
	// Fire is what became of one occurrence of a time trigger, or of one
	// trigger of a configuration.
	Fire = job.Fire
	// FireQuery selects fires.
	FireQuery = store.FireQuery
	// Store keeps a scheduler's journal, state and history (Config.Store).
	Store = store.Store
	// Runner runs the commands and functions of jobs (Config.Runner).
	Runner = scheduler.Runner
	// Mailer sends alerts (Config.Mailer).
	Mailer = scheduler.Mailer
	// Launch is what a Runner needs to start a run.
	Launch = job.Launch
	// Exit is how a run ended, as a Runner reports it.
	Exit = job.Exit
)

// Actions.
const (
	ActStart  = job.ActStart  // start now, bypassing the condition
	ActAbort  = job.ActAbort  // stop the active run
	ActFreeze = job.ActFreeze // hold: triggers are skipped, and conditions naming it are true
	ActReset  = job.ActReset  // back to idle
	ActGreen  = job.ActGreen  // mark succeeded
	ActRed    = job.ActRed    // mark failed
)

// Outcomes.
const (
	Success    = job.OutcomeSuccess
	Failure    = job.OutcomeFailure
	NotStarted = job.OutcomeNotStarted
	Retry      = job.OutcomeRetry // a failed run that is run again
	Alarm      = job.OutcomeAlarm // a run longer or shorter than expected
)

// Overlap policies: what a trigger does while a run of the job is active.
const (
	Skip  = "skip"  // it is skipped (the default)
	Allow = "allow" // another run starts, concurrently
	Queue = "queue" // it runs when the active run ends
)

// Job is a job to add. Name and exactly one of Function and Command are
// required; at most one time trigger (Every with Start, Cron) may be set,
// and a job without one should have a Condition, which then starts it.
type Job struct {
	// Name is unique among jobs and groups: letters, digits and
	// underscores, at most 64.
	Name string
	// Function names a registered Func (or the built-in "log").
	Function string
	// Command is a shell command, run by /bin/sh -c, with its output
	// appended to OutLog and ErrLog (required with a command; optional
	// with a function, whose Run.Logf writes to OutLog).
	Command        string
	OutLog, ErrLog string

	// Start, End and Every are an interval trigger: runs at Start + k ×
	// Every while not after End (zero End: no end). Every is "N unit(s)"
	// with unit second, minute, hour, day, week, month or year. Start
	// alone runs once. Dates are taken to the second, in the job's zone.
	Start, End time.Time
	Every      string
	// Cron is a cron expression of 5 fields (or 6, with seconds first).
	Cron string
	// Timezone is the IANA zone of the trigger; empty means the
	// scheduler's Location.
	Timezone string

	// Condition gates the job on other jobs: su(A), fa(A), nr(A) combined
	// with & and |; OnSuccess, OnFailure and OnCompletion write the common
	// ones. A job with a condition and no time trigger starts when the
	// condition becomes true, after Delay.
	Condition string
	Delay     time.Duration
	// Overlap is Skip (default), Allow or Queue.
	Overlap string
	// Priority is 0 (low) to 3 (critical): the order in which ready jobs
	// get free workers.
	Priority int
	Label    string

	// AlertOn lists the outcomes that send an email to AlertTo, through
	// the text/template file AlertTemplate (empty: the default template).
	AlertOn       []Outcome
	AlertTo       []string
	AlertTemplate string

	// Retries runs a failed run again, up to this many times, before the
	// failure is final: after RetryDelay, then each time RetryBackoff
	// (1 or more) times longer, at most RetryMaxDelay. Dependents see the
	// final outcome only.
	Retries       int
	RetryDelay    time.Duration
	RetryBackoff  float64
	RetryMaxDelay time.Duration
	// Timeout kills a run that has run this long (a function's context is
	// canceled) and records it failed.
	Timeout time.Duration
	// MaxRunAlarm and MinRunAlarm raise an alarm (AlertOn Alarm mails it)
	// when a run runs longer, or ends sooner, than this.
	MaxRunAlarm, MinRunAlarm time.Duration

	// Params declares the job's parameters with their defaults: a start
	// may give other values (Scheduler.StartWith, a backfill, the command
	// line), which its run records. A function reads them with Run.Param;
	// a command as variables of their names. Names are letters, digits and
	// underscores, not starting with a digit.
	Params map[string]string
}

// OnSuccess is the condition "after job succeeds".
func OnSuccess(job string) string { return "su(" + job + ")" }

// OnFailure is the condition "after job fails".
func OnFailure(job string) string { return "fa(" + job + ")" }

// OnCompletion is the condition "after job ends, whatever its outcome".
func OnCompletion(job string) string { return "su(" + job + ")|fa(" + job + ")" }

// definition builds the stored form of j.
func (j *Job) definition(loc *time.Location) (*job.Task, error) {
	t := &job.Task{
		Name: j.Name, Type: job.Callable, Command: j.Command, OutLog: j.OutLog, ErrLog: j.ErrLog,
		Cron: j.Cron, Timezone: j.Timezone, Condition: j.Condition, Priority: job.Priority(j.Priority), Interval: j.Every,
		Extra: &job.Extra{Function: j.Function, StartDelay: job.Duration(j.Delay), Overlap: job.Overlap(j.Overlap), Label: j.Label,
			AlertOn: j.AlertOn, AlertTo: j.AlertTo, AlertTemplate: j.AlertTemplate},
	}
	if p := (job.Policy{Retries: j.Retries, RetryDelay: job.Duration(j.RetryDelay), RetryBackoff: j.RetryBackoff,
		RetryMaxDelay: job.Duration(j.RetryMaxDelay), TermRunTime: job.Duration(j.Timeout), MaxRunAlarm: job.Duration(j.MaxRunAlarm),
		MinRunAlarm: job.Duration(j.MinRunAlarm)}); !p.IsZero() {
		t.Extra.Policy = &p
	}
	if len(j.Params) > 0 {
		t.Extra.Environment = &job.Environment{Params: api.Params(j.Params)}
	}
	t.Compact()
	if j.Timezone != "" {
		var err error
		if loc, err = time.LoadLocation(j.Timezone); err != nil {
			return nil, fmt.Errorf("gnomon: job %s: timezone: %w", j.Name, err)
		}
	}
	const layout = "2006-01-02 15:04:05"
	if !j.Start.IsZero() {
		t.StartDate = j.Start.In(loc).Format(layout)
	}
	if !j.End.IsZero() {
		t.EndDate = j.End.In(loc).Format(layout)
	}
	return t, nil
}

// AddJob adds a job. It fails, changing nothing, if the job is invalid or
// its name is taken.
func (s *Scheduler) AddJob(ctx context.Context, j Job) error {
	t, err := j.definition(s.cfg.Location)
	if err != nil {
		return err
	}
	return s.define(ctx, "job", t.Name, defs.Define(t), defs.AsWritten)
}

// define applies one definition built in Go: the action that defines it,
// checked by the rules a file's are. Its errors name the job (or group)
// and the problems.
func (s *Scheduler) define(ctx context.Context, what, name string, a defs.Action, mode defs.Mode) error {
	_, err := s.sched.Define(ctx, scheduler.DefineFile{File: what + " " + name, Actions: []defs.Action{a}, Mode: mode})
	var errs defs.Errors
	if errors.As(err, &errs) {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Msg
		}
		return fmt.Errorf("gnomon: %s %s: %s", what, name, strings.Join(msgs, "; "))
	}
	if err != nil {
		return fmt.Errorf("gnomon: %w", err)
	}
	return nil
}

// ReplaceJob replaces a job's definition with j (adding it if it does not
// exist). A run in flight finishes under the old definition.
func (s *Scheduler) ReplaceJob(ctx context.Context, j Job) error {
	t, err := j.definition(s.cfg.Location)
	if err != nil {
		return err
	}
	return s.define(ctx, "job", t.Name, defs.Define(t), defs.Declared)
}

// RemoveJob removes a job. It fails while the job is active, named in
// another job's condition, or a member of a group.
func (s *Scheduler) RemoveJob(ctx context.Context, name string) error {
	return s.define(ctx, "job", name, defs.Action{Kind: defs.Delete, Name: name}, defs.AsWritten)
}

// Group is a named set of jobs that share alert settings. A job may belong
// to several groups: an outcome alerts each recipient of the job and its
// groups once.
type Group struct {
	Name string
	// Jobs are the names of existing jobs; at least one.
	Jobs  []string
	Label string
	// AlertOn lists the outcomes of any of Jobs that send an email to
	// AlertTo, through the text/template file AlertTemplate (empty: the
	// default template).
	AlertOn       []Outcome
	AlertTo       []string
	AlertTemplate string
}

// AddGroup adds a group of existing jobs.
func (s *Scheduler) AddGroup(ctx context.Context, g Group) error {
	t := &job.Task{Name: g.Name, Type: job.Group,
		Extra: &job.Extra{Jobs: g.Jobs, Label: g.Label, AlertOn: g.AlertOn, AlertTo: g.AlertTo, AlertTemplate: g.AlertTemplate}}
	return s.define(ctx, "group", t.Name, defs.Define(t), defs.AsWritten)
}

// RemoveGroup removes a group; its jobs stay.
func (s *Scheduler) RemoveGroup(ctx context.Context, name string) error {
	return s.define(ctx, "group", name, defs.Action{Kind: defs.DeleteGroup, Name: name}, defs.AsWritten)
}

// JobStatus is a job's definition and current state.
type JobStatus struct {
	Definition Definition
	Status     Status
	// Start and End are those of the latest run (End is zero while it
	// runs).
	Start, End time.Time
	// NextRun is the next occurrence of the job's time trigger, zero if
	// none.
	NextRun time.Time
	// RunID is the active run, 0 if none.
	RunID int64
}

// Job returns a job's (or a group's) definition and state.
func (s *Scheduler) Job(ctx context.Context, name string) (JobStatus, error) {
	def, st, ok := s.sched.View().Task(name)
	if !ok {
		return JobStatus{}, fmt.Errorf("gnomon: job %s not found", name)
	}
	return statusOf(def, st), nil
}

// Jobs returns every job and group, by name.
func (s *Scheduler) Jobs(ctx context.Context) ([]JobStatus, error) {
	var out []JobStatus
	s.sched.View().Ascend("", func(it *scheduler.TaskItem) bool {
		out = append(out, statusOf(*it.Def, it.State))
		return true
	})
	return out, nil
}

func statusOf(def job.Task, st job.State) JobStatus {
	return JobStatus{Definition: def, Status: st.Status, Start: st.Start.Time(), End: st.End.Time(), NextRun: st.NextFire.Time(), RunID: st.RunID}
}

// RunStatus is a run in flight.
type RunStatus struct {
	Run RunRecord
	// RunningStatus and Data are what a function run reported so far
	// (Run.SetStatus, Run.Set).
	RunningStatus string
	Data          map[string]string
}

// Running returns the runs in flight, oldest first.
func (s *Scheduler) Running(ctx context.Context) ([]RunStatus, error) {
	runs, err := s.sched.Running(ctx)
	if err != nil {
		return nil, fmt.Errorf("gnomon: %w", err)
	}
	var out []RunStatus
	for _, r := range runs {
		rs := RunStatus{Run: r}
		rs.RunningStatus, rs.Data, _ = s.sched.Progress(r.ID)
		out = append(out, rs)
	}
	return out, nil
}

// Runs returns a job's runs, newest first, at most limit (0: all).
func (s *Scheduler) Runs(ctx context.Context, name string, limit int) ([]RunRecord, error) {
	rs, err := s.sched.Store().Runs(ctx, store.RunQuery{Task: name, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("gnomon: %w", err)
	}
	return rs, nil
}

// Alerts returns a job's alerts (every job's with an empty name), newest
// first, at most limit (0: all).
func (s *Scheduler) Alerts(ctx context.Context, name string, limit int) ([]Alert, error) {
	as, err := s.store.Alerts(ctx, store.AlertQuery{Task: name, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("gnomon: %w", err)
	}
	return as, nil
}

// Audit returns the audit records after sequence number after, oldest
// first, at most limit (0: 1000). AuditRecord.Line renders one as
// audit.log holds it.
func (s *Scheduler) Audit(ctx context.Context, after int64, limit int) ([]AuditRecord, error) {
	as, err := s.store.Audit(ctx, after, limit)
	if err != nil {
		return nil, fmt.Errorf("gnomon: %w", err)
	}
	return as, nil
}
