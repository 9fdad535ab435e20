package scheduler

import (
	"cmp"
	"time"

	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
)

// effect is what the loop has done once a batch is durable, in order, on
// the effects goroutine: start or kill a run, release a run's files, tell
// a listener, log. The set is closed: the types below.
type effect interface{ perform(s *Scheduler) }

type (
	startRun engine.StartRun
	killRun  engine.KillRun
	// forget releases the files of a run whose end is durable.
	forget int64
	// logged is an engine effect that only the log hears of.
	logged struct{ engine.Effect }
	// logFire is the fate of an occurrence that did not run.
	logFire job.Fire
)

// effectOf returns the effect of an engine effect.
func effectOf(ef engine.Effect) effect {
	switch ef := ef.(type) {
	case engine.StartRun:
		return startRun(ef)
	case engine.KillRun:
		return killRun(ef)
	}
	return logged{ef}
}

// perform carries out effects in order, off the loop goroutine.
func (s *Scheduler) perform() {
	defer s.wg.Done()
	for list := range s.effects {
		for _, ef := range list {
			ef.perform(s)
		}
	}
}

func (ef startRun) perform(s *Scheduler) {
	s.log.Info("run started", "task", ef.Task.Name, "run", ef.Run.ID)
	s.sim.started(ef.Run.ID, ef.Run.Start)
	l := launchOf(&ef.Run, &ef.Task)
	v := s.View() // published with the commit that started the run
	l.LogRotate = rotationOf(l.LogRotate, v.Groups(ef.Task.Name), func(g string) *job.LogRotation {
		if it, ok := v.Item(g); ok {
			return it.Def.Extras().LogRotate
		}
		return nil
	})
	s.cfg.Runner.Start(l, s.report)
}

// rotationOf returns the log rotation of a run of a task: each setting
// of the task's own, and for each it leaves to the server, that of the
// first of its groups (in name order) that sets it; nil when all are the
// server's.
func rotationOf(own *job.LogRotation, groups []string, of func(group string) *job.LogRotation) *job.LogRotation {
	var r job.LogRotation
	if own != nil {
		r = *own
	}
	for _, g := range groups {
		if gr := of(g); gr != nil {
			r.Size = cmp.Or(r.Size, gr.Size)
			r.Age = cmp.Or(r.Age, gr.Age)
			r.Keep = cmp.Or(r.Keep, gr.Keep)
		}
	}
	if r == (job.LogRotation{}) {
		return nil
	}
	return &r
}

func (ef killRun) perform(s *Scheduler) {
	if ef.Reason != "" {
		s.log.Info("run killed", "run", ef.RunID, "reason", ef.Reason)
	} else {
		s.log.Info("run aborted", "run", ef.RunID)
	}
	s.cfg.Runner.Kill(ef.RunID)
}

func (ef forget) perform(s *Scheduler) { s.cfg.Runner.Forget(int64(ef)) }

func (ef Notice) perform(s *Scheduler) { s.cfg.Listener(ef) }

func (ef logged) perform(s *Scheduler) {
	switch ef := ef.Effect.(type) {
	case engine.Triggered:
		s.log.Info("job triggered", "configuration", ef.Task, "at", ef.At.UTC().Format(time.RFC3339Nano),
			"event", string(ef.Type)+"/"+ef.Resource)
	case engine.NotStarted:
		s.log.Info("not started", "task", ef.Task, "reason", ef.Reason)
	case engine.Alarmed:
		s.log.Warn("alarm", "task", ef.Task, "kind", string(ef.Alarm.Kind), "run", ef.Alarm.RunID, "message", ef.Alarm.Message)
	}
}

func (ef logFire) perform(s *Scheduler) {
	s.log.Info("occurrence "+string(ef.Fate), "task", ef.Task, "scheduled", ef.Scheduled, "reason", ef.Reason)
}

// launchOf returns what a runner needs to start (or attach to) run r of
// task t.
func launchOf(r *job.Run, t *job.Task) job.Launch {
	x := t.Extras()
	return job.Launch{RunID: r.ID, Task: r.Task, Command: t.Command, Function: x.Function, Profile: x.Profile, Owner: x.Owner,
		OutLog: t.OutLog, ErrLog: t.ErrLog, Scheduled: r.Scheduled, Attempt: r.Attempt, Machine: x.Machine, Priority: t.Priority,
		Env: envOf(x.Environment, r.Params), LogRotate: x.LogRotate}
}

// envOf returns the environment a run of a task starts with: the task's,
// its parameters given the values the run records, and the file a file
// watcher started it for (job.WatchParam); nil when it has none.
func envOf(e *job.Environment, given []job.Var) *job.Environment {
	var watched []job.Var
	for _, g := range given {
		if g.Name == job.WatchParam {
			watched = append(watched, g)
		}
	}
	if e.IsZero() && len(watched) == 0 {
		return nil
	}
	var c job.Environment
	if e != nil {
		c = *e
	}
	c.Params = append(e.Resolve(given), watched...)
	return &c
}

// report hands a run's outcome to the loop (or drops it once the
// scheduler stops: the run stays recorded as running, and is attached or
// lost at the next start).
func (s *Scheduler) report(e job.Exit) {
	select {
	case s.in <- &request{ev: s.exited(e)}:
	case <-s.quit:
	}
}

// exited returns the engine's event for a run's outcome: on a virtual
// clock, the run ends when its virtual time has passed.
func (s *Scheduler) exited(e job.Exit) engine.RunExited {
	ev := engine.RunExited{RunID: e.RunID, ExitCode: e.Code, Result: e.Result, Message: e.Message, Data: e.Data, At: e.End, Log: e.Log}
	if s.sim.on() {
		ev.At = s.sim.ended(e.RunID)
	}
	return ev
}

// Notice is what a Listener is told.
type Notice struct {
	Kind NoticeKind
	Task string
	// Run is the run started or ended (zero for NotStarted).
	Run job.Run
	// Reason says why a task did not start.
	Reason string
}

// NoticeKind is the kind of a Notice.
type NoticeKind string

// Notice kinds.
const (
	Started    NoticeKind = "started"
	Succeeded  NoticeKind = "succeeded"
	Failed     NoticeKind = "failed" // failed, aborted, lost or failed to launch
	NotStarted NoticeKind = "not_started"
	// Alarm is an alarm of the task's run policy (Reason says what).
	Alarm NoticeKind = "alarm"
)

// appendNotices adds what an output tells listeners: the runs that ended,
// then what that caused.
func appendNotices(notices []effect, out *engine.Output) []effect {
	for _, r := range out.Runs {
		switch {
		case r.Status == job.Success:
			notices = append(notices, Notice{Kind: Succeeded, Task: r.Task, Run: *r})
		case r.Done():
			notices = append(notices, Notice{Kind: Failed, Task: r.Task, Run: *r})
		}
	}
	for _, ef := range out.Effects {
		switch ef := ef.(type) {
		case engine.StartRun:
			notices = append(notices, Notice{Kind: Started, Task: ef.Task.Name, Run: ef.Run})
		case engine.NotStarted:
			notices = append(notices, Notice{Kind: NotStarted, Task: ef.Task, Reason: ef.Reason})
		case engine.Alarmed:
			notices = append(notices, Notice{Kind: Alarm, Task: ef.Task, Reason: ef.Alarm.Message})
		}
	}
	return notices
}
