package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/periods"
)

// Client calls a gnomon server's API.
type Client struct {
	// Base is the server's URL, such as http://127.0.0.1:8080.
	Base string
	// Token is sent as the bearer token of every request.
	Token string
	// HTTP defaults to a client with a 60 s timeout.
	HTTP *http.Client
}

// ErrUnreachable wraps failures to reach the server at all.
var ErrUnreachable = errors.New("server unreachable")

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return &http.Client{Timeout: 60 * time.Second}
}

// do sends a request and decodes a JSON answer into out (or copies a text
// answer into an io.Writer out). A non-2xx answer is returned as *Error.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.Base, "/")+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrUnreachable, c.Base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		var er ErrorResponse
		b, _ := io.ReadAll(resp.Body)
		if json.Unmarshal(b, &er) != nil || er.Error == "" {
			er.Error = fmt.Sprintf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
		}
		return &Error{Status: resp.StatusCode, Message: er.Error, Errors: er.Errors}
	}
	switch out := out.(type) {
	case nil:
		return nil
	case io.Writer:
		_, err := io.Copy(out, resp.Body)
		return err
	default:
		return json.NewDecoder(resp.Body).Decode(out)
	}
}

// Define applies (or with check only validates) definition text.
func (c *Client) Define(ctx context.Context, file, text string, check bool) (string, error) {
	var resp DefineResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/definitions", DefineRequest{File: file, Text: text, Check: check}, &resp)
	return resp.Message, err
}

// DefineFile sends a definition file as req says (in the apply and sync
// modes, the answer tells what it changes).
func (c *Client) DefineFile(ctx context.Context, req DefineRequest) (*DefineResponse, error) {
	var resp DefineResponse
	return &resp, c.do(ctx, http.MethodPost, "/api/v1/definitions", req, &resp)
}

// Event sends an action to a task.
func (c *Client) Event(ctx context.Context, task, event string) error {
	return c.EventParams(ctx, task, event, nil)
}

// EventParams sends an action to a task with parameter values, for a
// start (see EventRequest.Params).
func (c *Client) EventParams(ctx context.Context, task, event string, params map[string]string) error {
	return c.do(ctx, http.MethodPost, "/api/v1/tasks/"+url.PathEscape(task)+"/events", EventRequest{Event: event, Params: params}, nil)
}

// Tasks returns the names of every task, sorted.
func (c *Client) Tasks(ctx context.Context) ([]string, error) {
	var v TasksResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/tasks", nil, &v)
	return v.Tasks, err
}

// ListTasks returns a page of task names, sorted: at most count after
// cursor (empty: from the first).
func (c *Client) ListTasks(ctx context.Context, count int, cursor string) (*TasksResponse, error) {
	q := url.Values{"count": {strconv.Itoa(count)}}
	setCursor(q, cursor)
	var v TasksResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/tasks?"+q.Encode(), nil, &v)
}

// setCursor adds a page's cursor to a query, when there is one.
func setCursor(q url.Values, cursor string) {
	if cursor != "" {
		q.Set("cursor", cursor)
	}
}

// Task returns a task's definition and state.
func (c *Client) Task(ctx context.Context, name string) (*TaskView, error) {
	var v TaskView
	return &v, c.do(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(name), nil, &v)
}

// Status returns the latest status of a task and, for a bundle, its children.
func (c *Client) Status(ctx context.Context, name string) (*StatusResponse, error) {
	var v StatusResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(name)+"/status", nil, &v)
}

// Runs returns up to count past runs, newest first, optionally only those
// that started on day (YYYY-MM-DD in the server's zone). Runs in progress
// are included.
func (c *Client) Runs(ctx context.Context, name string, count int, day string) (*RunsResponse, error) {
	return c.ListRuns(ctx, RunsQuery{Task: name, Count: count, Day: day})
}

// RunsQuery selects a page of a task's runs.
type RunsQuery struct {
	Task  string
	Count int    // at most this many (the server's default when 0)
	Day   string // only those started on this day (YYYY-MM-DD in the server's zone)
	// Done leaves out runs in progress.
	Done bool
	// Cursor is the Next of the previous page (empty: the newest first).
	Cursor string
}

// ListRuns returns a page of a task's runs, newest first.
func (c *Client) ListRuns(ctx context.Context, rq RunsQuery) (*RunsResponse, error) {
	q := url.Values{}
	if rq.Count > 0 {
		q.Set("count", strconv.Itoa(rq.Count))
	}
	if rq.Day != "" {
		q.Set("date", rq.Day)
	}
	if rq.Done {
		q.Set("done", "true")
	}
	setCursor(q, rq.Cursor)
	var v RunsResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(rq.Task)+"/runs?"+q.Encode(), nil, &v)
}

// Fires returns up to count recorded occurrences of a task, newest first,
// optionally of one day (YYYY-MM-DD in the server's zone).
func (c *Client) Fires(ctx context.Context, name string, count int, day string) (*FiresResponse, error) {
	return c.ListFires(ctx, name, count, day, "")
}

// ListFires returns a page of a task's recorded occurrences, newest first:
// at most count (of day, when not empty) after cursor (empty: the newest
// first).
func (c *Client) ListFires(ctx context.Context, name string, count int, day, cursor string) (*FiresResponse, error) {
	q := url.Values{"count": {strconv.Itoa(count)}}
	if day != "" {
		q.Set("date", day)
	}
	setCursor(q, cursor)
	var v FiresResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/tasks/"+url.PathEscape(name)+"/fires?"+q.Encode(), nil, &v)
}

// Forecast returns the planned fires of one task (or all when task is
// empty) between from and to (empty: the server's defaults).
func (c *Client) Forecast(ctx context.Context, task, from, to string, limit int) (*ForecastResponse, error) {
	return c.ListForecast(ctx, task, from, to, limit, "")
}

// ListForecast returns a page of a forecast: the cursor is the Next of the
// previous page, given with the same task, from, to and limit.
func (c *Client) ListForecast(ctx context.Context, task, from, to string, limit int, cursor string) (*ForecastResponse, error) {
	q := url.Values{}
	for k, v := range map[string]string{"task": task, "from": from, "to": to} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	setCursor(q, cursor)
	var v ForecastResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/forecast?"+q.Encode(), nil, &v)
}

// Info returns the server's time zone, version and runtime figures.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	var v Info
	return &v, c.do(ctx, http.MethodGet, "/api/v1/info", nil, &v)
}

// Clock returns the server's time.
func (c *Client) Clock(ctx context.Context) (*ClockResponse, error) {
	var v ClockResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/clock", nil, &v)
}

// Advance moves a simulating server's clock to an instant and returns once
// the server has settled there. It may take long: give ctx a deadline, or
// none.
func (c *Client) Advance(ctx context.Context, to string) (*ClockResponse, error) {
	return c.MoveClock(ctx, ClockRequest{To: to})
}

// MoveClock moves a simulating server's clock, ticks its continuous
// timeperiod levels, or both, as req says, and returns once the server has
// settled. It may take long: give ctx a deadline, or none.
func (c *Client) MoveClock(ctx context.Context, req ClockRequest) (*ClockResponse, error) {
	var v ClockResponse
	long := *c
	if c.HTTP == nil {
		long.HTTP = &http.Client{} // no timeout: a simulated week takes a while
	}
	return &v, long.do(ctx, http.MethodPost, "/api/v1/clock", req, &v)
}

// Tick runs a tick of every continuous timeperiod level of a simulating
// server, without moving its clock.
func (c *Client) Tick(ctx context.Context) (*ClockResponse, error) {
	return c.MoveClock(ctx, ClockRequest{Tick: true})
}

// ExportTreeFile writes a tree file, as JSON, as the server holds it.
func (c *Client) ExportTreeFile(ctx context.Context, file string, w io.Writer) error {
	return c.do(ctx, http.MethodGet, "/api/v1/definitions?tree_file="+url.QueryEscape(file), nil, w)
}

// Trees describes every timeperiod tree, by name.
func (c *Client) Trees(ctx context.Context) (*TreesResponse, error) {
	var v TreesResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/trees", nil, &v)
}

// Tree describes one timeperiod tree.
func (c *Client) Tree(ctx context.Context, name string) (*periods.TreeInfo, error) {
	var v periods.TreeInfo
	return &v, c.do(ctx, http.MethodGet, "/api/v1/trees/"+url.PathEscape(name), nil, &v)
}

// NodesQuery selects nodes: those of Process (between From and To, keys of
// its level or finer, inclusive, when set), with Outstanding only those with
// a run requested or running; Outstanding without Process selects those of
// every tree.
type NodesQuery struct {
	Process     string
	From, To    string
	Outstanding bool
}

// Nodes lists nodes, in process and key order.
func (c *Client) Nodes(ctx context.Context, nq NodesQuery) (*NodesResponse, error) {
	q := url.Values{}
	for k, v := range map[string]string{"process": nq.Process, "from": nq.From, "to": nq.To} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if nq.Outstanding {
		q.Set("outstanding", "true")
	}
	var v NodesResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/nodes?"+q.Encode(), nil, &v)
}

// nodePath is the path of a node's endpoints.
func nodePath(process, timeperiod string) string {
	return "/api/v1/nodes/" + url.PathEscape(process) + "/" + url.PathEscape(timeperiod)
}

// Node returns one node with what surrounds it; a timeperiod of a finer
// level names the period that contains it.
func (c *Client) Node(ctx context.Context, process, timeperiod string) (*NodeDetailView, error) {
	var v NodeDetailView
	return &v, c.do(ctx, http.MethodGet, nodePath(process, timeperiod), nil, &v)
}

// CompleteNode reports the outcome of a node's outstanding run and returns
// the node after it.
func (c *Client) CompleteNode(ctx context.Context, process, timeperiod string, req CompleteRequest) (*NodeDetailView, error) {
	var v NodeDetailView
	return &v, c.do(ctx, http.MethodPost, nodePath(process, timeperiod)+"/complete", req, &v)
}

// StartNode says that a node's outstanding run started, and returns the
// node.
func (c *Client) StartNode(ctx context.Context, process, timeperiod string) (*NodeDetailView, error) {
	var v NodeDetailView
	return &v, c.do(ctx, http.MethodPost, nodePath(process, timeperiod)+"/start", nil, &v)
}

// SkipNodes skips periods of a process (at least one), with the cascade,
// and returns the state changes; with dryRun, those it would make.
func (c *Client) SkipNodes(ctx context.Context, process string, timeperiods []string, dryRun bool) (*ChangedResponse, error) {
	if len(timeperiods) == 0 {
		return nil, errors.New("skip: no timeperiod")
	}
	var in any
	if len(timeperiods) > 1 {
		in = SkipRequest{Timeperiods: timeperiods[1:]}
	}
	var v ChangedResponse
	return &v, c.do(ctx, http.MethodPost, nodePath(process, timeperiods[0])+"/skip"+dryRunQuery(dryRun), in, &v)
}

// ReprocessNode reprocesses a period of a process, with the cascade, and
// returns the state changes; with dryRun, those it would make.
func (c *Client) ReprocessNode(ctx context.Context, process, timeperiod string, dryRun bool) (*ChangedResponse, error) {
	var v ChangedResponse
	return &v, c.do(ctx, http.MethodPost, nodePath(process, timeperiod)+"/reprocess"+dryRunQuery(dryRun), nil, &v)
}

func dryRunQuery(dryRun bool) string {
	if dryRun {
		return "?dry_run=true"
	}
	return ""
}

// Export writes definitions (all, or one task and its children) in the
// definition language.
func (c *Client) Export(ctx context.Context, name string, w io.Writer) error {
	path := "/api/v1/definitions"
	if name != "" {
		path += "?task=" + url.QueryEscape(name)
	}
	return c.do(ctx, http.MethodGet, path, nil, w)
}

// PostEvent sends one data event to /events (ts as the event's timestamp,
// in the grammar the endpoint reads).
func (c *Client) PostEvent(ctx context.Context, typ, resource, ts string) (*EventsResponse, error) {
	var v EventsResponse
	return &v, c.do(ctx, http.MethodPost, "/events", WireEvent{Type: typ, Timestamp: ts, Resource: resource}, &v)
}

// Received lists the data events the server accepted, newest first, at
// most count, only those configuration stored when it is not empty.
func (c *Client) Received(ctx context.Context, configuration string, count int) (*ReceivedResponse, error) {
	return c.ListReceived(ctx, configuration, count, "")
}

// ListReceived returns a page of the data events the server accepted,
// newest first: at most count after cursor (empty: the newest first).
func (c *Client) ListReceived(ctx context.Context, configuration string, count int, cursor string) (*ReceivedResponse, error) {
	q := url.Values{"count": {strconv.Itoa(count)}}
	if configuration != "" {
		q.Set("configuration", configuration)
	}
	setCursor(q, cursor)
	var v ReceivedResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/events?"+q.Encode(), nil, &v)
}

// Alerts lists alerts, newest first: a job's (every job's when name is
// empty), at most count.
func (c *Client) Alerts(ctx context.Context, name string, count int) (*AlertsResponse, error) {
	return c.ListAlerts(ctx, name, count, "")
}

// ListAlerts returns a page of alerts, newest first: at most count after
// cursor (empty: the newest first).
func (c *Client) ListAlerts(ctx context.Context, name string, count int, cursor string) (*AlertsResponse, error) {
	q := url.Values{"count": {strconv.Itoa(count)}}
	if name != "" {
		q.Set("job", name)
	}
	setCursor(q, cursor)
	var v AlertsResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/alerts?"+q.Encode(), nil, &v)
}

// Audit lists audit records after a sequence number, oldest first, at
// most count.
func (c *Client) Audit(ctx context.Context, after int64, count int) (*AuditResponse, error) {
	return c.ListAudit(ctx, after, count, "")
}

// ListAudit returns a page of audit records, oldest first: at most count
// after the sequence number after, or after cursor when it is not empty.
func (c *Client) ListAudit(ctx context.Context, after int64, count int, cursor string) (*AuditResponse, error) {
	q := url.Values{"count": {strconv.Itoa(count)}, "after": {strconv.FormatInt(after, 10)}}
	setCursor(q, cursor)
	var v AuditResponse
	return &v, c.do(ctx, http.MethodGet, "/api/v1/audit?"+q.Encode(), nil, &v)
}

// Health reports whether the server answers /healthz.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/healthz", nil, nil)
}
