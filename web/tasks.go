package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/cond"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/job"
	"github.com/gnomon-sched/gnomon/store"
)

// taskRow is a task in a list.
type taskRow struct {
	Name     string
	Type     job.Type
	Status   job.Status
	Start    time.Time
	End      time.Time
	NextFire time.Time
	Label    string
	Parent   string
	// Bulk says, on the task list, why each action offered for a
	// selection would be refused for this task ("" when it applies).
	Bulk bulkRefusals
}

// bulkRefusals are why the actions the task list offers for a selection
// would be refused for one task: freeze, reset (which unfreezes) and
// start (which reruns a failed task).
type bulkRefusals struct{ Freeze, Reset, Start string }

func bulkOf(def *job.Task, st *job.State) bulkRefusals {
	return bulkRefusals{Freeze: refusal(job.ActFreeze, def, st), Reset: refusal(job.ActReset, def, st), Start: refusal(job.ActStart, def, st)}
}

// refusal is engine.Refusal for a task as the View has it: a backfill is
// under way while its state holds one.
func refusal(a job.Action, def *job.Task, st *job.State) string {
	return engine.Refusal(a, def, st, st.Backfill != nil)
}

func (u *UI) row(def job.Task, st job.State) taskRow {
	return taskRow{Name: def.Name, Type: def.Type, Status: st.Status, Start: u.local(st.Start.Time()), End: u.local(st.End.Time()),
		NextFire: u.local(st.NextFire.Time()), Label: def.Extras().Label, Parent: def.Parent}
}

func (u *UI) local(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.In(u.cfg.Location)
}

// overviewData is the front page: the scheduler at a glance.
type overviewData struct {
	Total  int
	Counts []statusCount
	// RunningTotal is how many tasks are running.
	RunningTotal int
	Running      []taskRow
	Failed       []failedRow
	Next         []calendar.Planned
	Undeliver    []job.Alert
	Problems     []string
	// Failures counts the runs that failed or were aborted in the last
	// 24 hours, FailedTasks their tasks (FailuresCut: more than
	// overviewFailures runs, of which the newest were counted).
	Failures, FailedTasks int
	FailuresCut           bool
	// Undelivered counts the alerts not delivered among the last
	// overviewAlerts.
	Undelivered int
	// Outcomes is the chart of the runs' outcomes by the hour.
	Outcomes outcomeData
}

// failedRow is a task that failed or was aborted, and its status now.
type failedRow struct {
	Name        string
	At          time.Time
	Status, Now job.Status
	// Times is how many of its runs failed or were aborted in the last
	// 24 hours, Run the latest of them (0 when the history has none).
	Times int
	Run   int64
}

type statusCount struct {
	Status job.Status
	N      int
}

// overviewRows bounds each list of the overview; each says how many it
// left out, and links to the page that lists them all.
const overviewRows = 20

// overviewFailures bounds the failed runs the overview counts;
// overviewAlerts the alerts it looks through for those not delivered.
const (
	overviewFailures = 10_000
	overviewAlerts   = 200
)

func (u *UI) overview(r *http.Request) (string, any, error) {
	v := u.cfg.Scheduler.View()
	d := u.overviews.read(v.Seq(), struct{}{}, func() overviewData { return u.readOverview(v) })
	st := u.cfg.Scheduler.Store()
	alerts, err := st.Alerts(r.Context(), store.AlertQuery{Limit: overviewAlerts})
	if err != nil {
		return "", nil, err
	}
	for _, a := range alerts {
		if a.State == job.AlertSent {
			continue
		}
		d.Undelivered++
		if len(d.Undeliver) < overviewRows {
			a.Created = u.local(a.Created)
			d.Undeliver = append(d.Undeliver, a)
		}
	}
	// How often each task failed in the last 24 hours, read once for the
	// requests of one View (see sharedRead): the rows are shared, so
	// they are copied. The read is not that of one request, which its
	// browser may cancel; a request that finds it failed reads again.
	// Both are read again at most once a beat while the View changes
	// (beatSeq).
	hist := u.historyBeat.of(v.Seq(), clock.Wall.Now())
	fc := u.failures.read(hist, struct{}{}, func() failureCounts { return u.countFailures(context.WithoutCancel(r.Context())) })
	if fc.err != nil {
		if fc = u.countFailures(r.Context()); fc.err != nil {
			return "", nil, fc.err
		}
	}
	d.Failures, d.FailedTasks, d.FailuresCut = fc.runs, len(fc.times), fc.cut
	// The chart of outcomes, shared the same way.
	oc := u.outcomes.read(hist, struct{}{}, func() outcomeData {
		return u.countOutcomes(context.WithoutCancel(r.Context()), u.cfg.Scheduler.Now())
	})
	if oc.err != nil {
		if oc = u.countOutcomes(r.Context(), u.cfg.Scheduler.Now()); oc.err != nil {
			return "", nil, oc.err
		}
	}
	d.Outcomes = oc
	d.Failed = slices.Clone(d.Failed)
	for i := range d.Failed {
		d.Failed[i].Times, d.Failed[i].Run = fc.times[d.Failed[i].Name], fc.last[d.Failed[i].Name]
	}
	return "Overview", d, nil
}

// failureCounts are the runs that failed or were aborted in the last 24
// hours: how many (cut: more than overviewFailures, of which the newest
// were counted), how many of each task, and the latest of each.
type failureCounts struct {
	runs  int
	cut   bool
	times map[string]int
	last  map[string]int64
	err   error
}

func (u *UI) countFailures(ctx context.Context) failureCounts {
	fc := failureCounts{times: map[string]int{}, last: map[string]int64{}}
	fails, err := u.cfg.Scheduler.Store().RunPage(ctx, store.RunPageQuery{Statuses: []job.Status{job.Failure, job.Aborted},
		From: u.cfg.Scheduler.Now().Add(-24 * time.Hour), Limit: overviewFailures + 1})
	if err != nil {
		fc.err = err
		return fc
	}
	if len(fails) > overviewFailures {
		fails, fc.cut = fails[:overviewFailures], true
	}
	for _, f := range fails {
		if fc.times[f.Task]++; fc.last[f.Task] == 0 {
			fc.last[f.Task] = f.ID
		}
	}
	fc.runs = len(fails)
	return fc
}

// tasksData is a page of the task list and the filter that chose it.
type tasksData struct {
	Filter  taskFilter
	Rows    []taskRow
	Matched int
	// Next is the name the next page starts after, "" on the last page.
	Next     string
	Groups   []string
	Statuses []string
	Types    []job.Type
	// Scope names the scope of the viewer's token, which the list is
	// limited to; "" for every task.
	Scope string
}

type taskFilter struct {
	Q, Status, Type, Group, Label, Bundle, After string
	// scope is the viewer's scope (scopeLine), part of the key of the
	// reads the lists share.
	scope string
}

// tasksPage is the length of a page of the task list.
const tasksPage = 100

func (u *UI) tasks(r *http.Request) (string, any, error) {
	q := r.URL.Query()
	f := taskFilter{Q: q.Get("q"), Status: q.Get("status"), Type: q.Get("type"), Group: q.Get("group"), Label: q.Get("label"), Bundle: q.Get("bundle"), After: q.Get("after")}
	var status job.Status
	if f.Status != "" {
		var err error
		if status, err = job.ParseStatus(f.Status); err != nil {
			return "", nil, badRequest("status: %v", err)
		}
	}
	v := u.cfg.Scheduler.View()
	scope := scopeOf(r)
	f.scope = scopeLine(scope)
	return "Tasks", u.lists.read(v.Seq(), f, func() tasksData { return u.listTasks(v, f, status, scope) }), nil
}

// taskData is everything the task page shows.
type taskData struct {
	Row        taskRow
	Def        job.Task
	State      job.State
	Definition string
	Children   []taskRow
	Groups     []string
	// Waiting lists, for a task whose condition holds it, each task the
	// condition names and its status.
	Condition []condTerm
	Pending   []job.Pending
	Stored    []engine.Stored
	Runs      []job.Run
	Fires     []job.Fire
	Forecast  []calendar.Planned
	// Why is the engine's chain of reasons the task is not running.
	Why whyView
	// Trend is how long its last runs took; nil before one ended.
	Trend *trendData
	// Actions are the operator's actions on the task, each with why the
	// engine would refuse it now or what it would do.
	Actions []actionView
	// At answers what became of the occurrence the page was asked about
	// (?at=).
	At atView
	// Backfill offers a backfill: the task has a time trigger.
	Backfill bool
}

// atView is the task page's question about one occurrence: the time
// asked (as the form shows it), and the answer or why it could not be
// read.
type atView struct {
	Zone, Value string
	Text, Err   string
	Run         int64
}

// occurrenceAt answers the task page's ?at=: what became of the task's
// occurrence at that time, as the API's why does.
func (u *UI) occurrenceAt(r *http.Request, name string, sched calendar.Schedule) atView {
	v := atView{Zone: u.cfg.Location.String()}
	asked := r.URL.Query().Get("at")
	if asked == "" {
		return v
	}
	at, err := calendar.ParseInstant(asked, u.cfg.Location)
	if err != nil {
		v.Value, v.Err = asked, "at: "+err.Error()
		return v
	}
	v.Value = u.local(at).Format("2006-01-02T15:04")
	text, fire, err := api.Occurrence(r.Context(), u.cfg.Scheduler.Store(), u.cfg.Scheduler.Now(), u.cfg.Location, name, at, sched)
	if err != nil {
		v.Err = err.Error()
		return v
	}
	v.Text = text
	if fire != nil {
		v.Run = fire.RunID
	}
	return v
}

// actionView is an action button of the task page: Refusal, when set, is
// why the engine would refuse it (the button says so and sends nothing);
// otherwise Words say what it does, for its confirmation.
type actionView struct {
	Name    job.Action
	Refusal string
	Words   string
}

// actionsOf returns the task page's actions for a task as the View has it.
// A group or a resource takes none.
func actionsOf(def *job.Task, st *job.State) []actionView {
	if def.Type == job.Group || def.Type == job.Resource {
		return nil
	}
	var list []actionView
	for _, a := range []job.Action{job.ActStart, job.ActAbort, job.ActFreeze, job.ActReset, job.ActGreen, job.ActRed} {
		v := actionView{Name: a, Refusal: refusal(a, def, st)}
		if v.Refusal == "" {
			v.Words = engine.Describe(a, def, st, st.Backfill != nil)
		}
		list = append(list, v)
	}
	return list
}

// taskRuns is how many of its runs a task's page lists.
const taskRuns = 20

type condTerm struct {
	Task   string
	Status job.Status
	Known  bool
}

func (u *UI) task(r *http.Request) (string, any, error) {
	name := r.PathValue("name")
	var (
		d     taskData
		sched calendar.Schedule
		text  strings.Builder
	)
	v := u.cfg.Scheduler.View()
	it, found := v.Item(name)
	if !found {
		return "", nil, notFound("task %s not found", name)
	}
	d.Def, d.State, d.Row = *it.Def, it.State, u.row(*it.Def, it.State)
	d.Actions = actionsOf(it.Def, &it.State)
	list := []*job.Task{it.Def.Clone()}
	for _, c := range it.Children {
		if ci, ok := v.Item(c); ok {
			d.Children = append(d.Children, u.row(*ci.Def, ci.State))
			list = append(list, ci.Def.Clone())
		}
	}
	defs.Format(&text, list)
	d.Groups, d.Stored, d.Pending, sched = it.Groups, it.Stored, it.State.Pending, it.Schedule
	if x, err := cond.Parse(d.Def.Condition); err == nil && d.Def.Condition != "" {
		for _, n := range x.Names() {
			_, cs, ok := v.Task(n)
			d.Condition = append(d.Condition, condTerm{Task: n, Status: cs.Status, Known: ok})
		}
	}
	var err error
	if d.Why, err = u.why(r.Context(), name, whyBudget); err != nil {
		return "", nil, err
	}
	d.Definition = text.String()
	d.At = u.occurrenceAt(r, name, sched)
	d.Backfill = sched != nil
	now := u.cfg.Scheduler.Now()
	if sched != nil {
		d.Forecast, _ = calendar.Forecast(map[string]calendar.Schedule{name: sched}, now, now.AddDate(0, 0, 31), 10)
		for i := range d.Forecast {
			d.Forecast[i].At = u.local(d.Forecast[i].At)
		}
	}
	st := u.cfg.Scheduler.Store()
	if d.Runs, err = st.Runs(r.Context(), store.RunQuery{Task: name, Limit: trendRuns}); err != nil {
		return "", nil, err
	}
	d.Trend = trend(d.Runs, *d.Def.Extras().RunPolicy())
	if len(d.Runs) > taskRuns {
		d.Runs = d.Runs[:taskRuns]
	}
	for i := range d.Runs {
		d.Runs[i].Start, d.Runs[i].End, d.Runs[i].Scheduled = u.local(d.Runs[i].Start), u.local(d.Runs[i].End), u.local(d.Runs[i].Scheduled)
	}
	if d.Fires, err = st.Fires(r.Context(), store.FireQuery{Task: name, Limit: 20}); err != nil {
		return "", nil, err
	}
	for i := range d.Fires {
		d.Fires[i].Scheduled, d.Fires[i].At = u.local(d.Fires[i].Scheduled), u.local(d.Fires[i].At)
	}
	return name, d, nil
}

// whyView is the why section of the task page: the reasons, or with Busy
// a placeholder that fetches them.
type whyView struct {
	Task    string
	Reasons []engine.Reason
	Busy    bool
}

// whyBudget is how long the task page waits for the loop to say why a
// task is not running, when the loop was idle as the page asked; past it,
// or when the loop was busy, the page is sent with a placeholder that
// fetches the reasons (whyFragment): a page read during a fire storm does
// not wait for the loop's commits. The loop answers between two commits:
// within a commit's time, unless the store is slow.
const whyBudget = 200 * time.Millisecond

// why asks the loop why a task is not running, waiting at most budget (0:
// as long as the request lasts; otherwise not at all if the loop is busy).
func (u *UI) why(ctx context.Context, name string, budget time.Duration) (whyView, error) {
	v := whyView{Task: name}
	if budget > 0 && !u.cfg.Scheduler.Idle() {
		v.Busy = true
		return v, nil
	}
	if budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	x, _, err := u.cfg.Scheduler.Why(ctx, name, u.cfg.Scheduler.Now())
	v.Reasons = x.Reasons
	if budget > 0 && errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		v.Busy, err = true, nil
	}
	return v, err
}

// whyFragment answers the why section of a task page on its own, for the
// placeholder of a page sent while the loop was busy.
func (u *UI) whyFragment(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	if _, _, ok := u.cfg.Scheduler.View().Task(name); !ok {
		return notFound("task %s not found", name)
	}
	v, err := u.why(r.Context(), name, 0)
	if err != nil {
		return err
	}
	return u.fragment(w, "why", v)
}
