package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/gnomon-sched/gnomon/job"
)

// Alert delivery: alerts are committed with the outcome that asks for them,
// then sent here, off the engine's path. A failed attempt is retried with
// exponential backoff (from retryMin, doubling, capped at retryMax) until
// RetryAlertsFor has passed since the first attempt; a permanent refusal
// ends it at once. Every attempt is recorded. An alert is marked sent only
// after the SMTP server accepted it, so a crash between the two sends it
// again: delivery is at least once.
const (
	retryMin = time.Second
	retryMax = 5 * time.Minute
)

// deliver sends pending alerts until the scheduler stops.
func (s *Scheduler) deliver() {
	defer s.wg.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.quit
		cancel()
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-s.alertWake:
		case <-timer.C:
		case reply := <-s.sim.kick:
			// Simulating: Advance asks, at each instant it stops at.
			reply <- s.sendDue(ctx)
			continue
		}
		next := s.sendDue(ctx)
		timer.Stop()
		if !next.IsZero() && !s.sim.on() {
			timer.Reset(max(next.Sub(s.cfg.Clock.Now()), 0))
		}
	}
}

// sendDue sends every alert due now and returns when the next retry is
// due (zero if none is waiting).
func (s *Scheduler) sendDue(ctx context.Context) time.Time {
	for ctx.Err() == nil {
		due, err := s.cfg.Store.PendingAlerts(ctx, s.cfg.Clock.Now(), 50)
		if err != nil {
			s.log.Error("reading pending alerts", "err", err)
			return s.cfg.Clock.Now().Add(retryMax)
		}
		if len(due) == 0 {
			break
		}
		for i := range due {
			if ctx.Err() != nil {
				return time.Time{}
			}
			s.attempt(ctx, &due[i])
		}
	}
	later, err := s.cfg.Store.PendingAlerts(ctx, s.cfg.Clock.Now().Add(100*365*24*time.Hour), 1)
	if err != nil || len(later) == 0 {
		return time.Time{}
	}
	return later[0].NextAt
}

// attempt tries to send one alert and records the outcome.
func (s *Scheduler) attempt(ctx context.Context, a *job.Alert) {
	now := s.cfg.Clock.Now().UTC()
	var err error
	hook := len(a.To) == 1 && isHook(a.To[0])
	switch {
	case hook && s.cfg.Hooks == nil:
		err = errNoHooks
	case hook:
		err = s.cfg.Hooks.Send(ctx, a)
	case s.cfg.Mailer == nil:
		err = errNoMailer
	default:
		err = s.cfg.Mailer.Send(ctx, a)
	}
	if ctx.Err() != nil {
		return // stopping: the attempt did not finish, and is not recorded
	}
	if a.Attempts == 0 {
		a.FirstAttempt = now
	}
	a.Attempts++
	at := job.Attempt{Alert: a.ID, At: now}
	result := AlertSent
	switch {
	case err == nil:
		a.State, a.SentAt, a.NextAt, a.LastError = job.AlertSent, now, time.Time{}, ""
		s.log.Info("alert sent", "alert", a.ID, "task", a.Task, "outcome", a.Outcome, "to", job.RedactAll(a.To))
	case errors.Is(err, errNoMailer) || errors.Is(err, errNoHooks) || IsPermanent(err):
		at.Error, a.LastError = err.Error(), err.Error()
		a.State, a.NextAt = job.AlertFailed, time.Time{}
		result = AlertRefused
		if errors.Is(err, errNoMailer) {
			result = AlertNotConfigured
			s.log.Info("alert recorded, not sent: no SMTP server is configured", "alert", a.ID, "task", a.Task, "outcome", a.Outcome)
		} else {
			s.log.Error("alert not sent", "alert", a.ID, "task", a.Task, "err", err)
		}
	default:
		at.Error, a.LastError = err.Error(), err.Error()
		wait := min(retryMin<<min(a.Attempts-1, 20), retryMax)
		if now.Add(wait).Sub(a.FirstAttempt) > s.cfg.RetryAlertsFor {
			a.State, a.NextAt, result = job.AlertFailed, time.Time{}, AlertGivenUp
			a.LastError += " (given up after " + now.Sub(a.FirstAttempt).Round(time.Second).String() + ")"
			s.log.Error("alert given up", "alert", a.ID, "task", a.Task, "attempts", a.Attempts, "err", err)
		} else {
			a.NextAt, result = now.Add(wait), AlertRetrying
			s.log.Warn("alert not sent; will retry", "alert", a.ID, "task", a.Task, "retry_in", wait, "err", err)
		}
	}
	if err := s.cfg.Store.RecordAttempt(context.Background(), a, at); err != nil {
		s.log.Error("recording an alert attempt", "alert", a.ID, "err", err)
	}
	s.obs.Alerted(result)
}

// errNoMailer is the outcome of every alert of a scheduler without a
// Mailer, errNoHooks of every webhook alert of one without Hooks.
var (
	errNoMailer = errors.New("no SMTP server is configured")
	errNoHooks  = errors.New("no webhook sender is configured")
)

// isHook reports whether an alert's recipient is a webhook.
func isHook(to string) bool {
	_, _, ok := job.HookTarget(to)
	return ok
}
