package cli

// Scenario files (testdata/scenarios/*.txt) replay timeperiod-tree
// situations through the HTTP API of a real server on a virtual clock in
// UTC, as checks written outside the repository do, and assert the exact
// node states and the exact set of outstanding runs after each move.
//
// # Format
//
// One step per line. Blank lines and lines starting with # are comments;
// so is the rest of a step line from a # preceded by a space. Keys are
// timeperiod keys (YYYYMMDDHH), instants RFC 3339 (nanoseconds allowed).
//
//	start INSTANT
//	    The server's virtual clock starts there. Exactly one, before
//	    every other step.
//	define FILE
//	    The lines that follow, up to a line "end", are a tree file's JSON,
//	    defined under the name FILE (POST /api/v1/definitions).
//	clock INSTANT
//	    Moves the clock (POST /api/v1/clock {"to"}), which settles; the
//	    answer must read INSTANT.
//	tick
//	    Ticks every continuous level without moving the clock
//	    (POST /api/v1/clock {"tick": true}).
//	expect PROCESS KEY STATE [failures=N] [run=none|requested|running] [id=N]
//	    The node is in STATE, with exactly N failures (default 0) and that
//	    outstanding run (default none); id=N also checks the run's ID.
//	nodes PROCESS [KEY=STATE ...]
//	    The process has exactly these nodes, in these states.
//	outstanding [PROCESS KEY[, PROCESS KEY ...]]
//	    The nodes with a run outstanding are exactly these (none: empty).
//	begin PROCESS KEY
//	    The worker starts the node's run (POST .../start).
//	complete PROCESS KEY OUTCOME [run=N]
//	    The worker reports the outcome of the node's run (POST .../complete),
//	    of run N if given.
//	skip PROCESS KEY [KEY ...] -> CHANGES
//	reprocess PROCESS KEY -> CHANGES
//	    An operator's skip (further keys go in the body) or reprocess. The
//	    answer's changed list must be exactly CHANGES, in any order: "none",
//	    or "PROCESS KEY FROM TO" entries separated by commas. Changes the
//	    settle made afterwards are part of the answer (a node reprocessed
//	    to embryo, then started again, appears twice).
//	backfill PROCESS FROM TO -> CHANGES
//	    An operator's backfill of the periods of the process from FROM to
//	    TO, both included (POST /api/v1/tasks/PROCESS/backfill): each
//	    finished one is reprocessed. CHANGES as for reprocess.
//	dry skip ... -> CHANGES
//	dry reprocess ... -> CHANGES
//	dry backfill ... -> CHANGES
//	    The same with dry_run; every node and outstanding run must be as
//	    before.
//	status CODE STEP [| TEXT]
//	    STEP (any of define, clock, tick, nodes, begin, complete, skip,
//	    reprocess, backfill, dry ...) must answer CODE instead of 200, its error
//	    holding TEXT, and, being refused, change nothing (every node,
//	    outstanding run and tree is read before and after). A refused
//	    skip or reprocess takes no "-> CHANGES".
//
// Each file runs as a parallel subtest with a server of its own, started
// on the virtual clock at its start instant with the time zone UTC. The
// requests are plain net/http; a failed assertion names the file and the
// line of its step, and a step answering an unexpected status ends the
// file.
//
// A file with a line "# BUG: ..." asserts what the specification says
// where the server disagrees: it is skipped with that line as the reason,
// unless the test runs with -scenario-bugs
// (go test ./cli -run TestScenarios -scenario-bugs).

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var scenarioBugs = flag.Bool("scenario-bugs", false, "also run the scenario files marked # BUG:")

// scenario is a parsed scenario file.
type scenario struct {
	file  string
	start string
	bug   string // the # BUG: line, if any
	steps []step
}

// step is one step of a scenario.
type step struct {
	line   int
	text   string // the line as written, for messages
	verb   string
	args   []string
	dry    bool
	body   string        // define: the tree file
	status int           // the expected status
	errMsg string        // with status: a text the error holds
	change *[]nodeChange // skip and reprocess: the expected changes
}

type nodeChange struct{ process, key, from, to string }

func (c nodeChange) String() string { return c.process + " " + c.key + " " + c.from + " " + c.to }

// parseScenario reads a scenario file; an error names the file and line.
func parseScenario(name, text string) (*scenario, error) {
	sc := &scenario{file: name}
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		raw := strings.TrimSpace(lines[i])
		if strings.HasPrefix(raw, "#") {
			if rest, ok := strings.CutPrefix(raw, "# BUG:"); ok && sc.bug == "" {
				sc.bug = fmt.Sprintf("%s:%d: BUG:%s", name, lineNo, rest)
			}
			continue
		}
		if j := strings.Index(raw, " #"); j >= 0 {
			raw = strings.TrimSpace(raw[:j])
		}
		if raw == "" {
			continue
		}
		st, err := parseStep(raw)
		if err == nil && st.verb == "define" {
			var body []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "end"; i++ {
				body = append(body, lines[i])
			}
			if i == len(lines) {
				err = errors.New(`define: no line "end"`)
			}
			st.body = strings.Join(body, "\n") + "\n"
		}
		switch {
		case err != nil:
		case st.verb == "start" && (sc.start != "" || len(sc.steps) > 0):
			err = errors.New("start comes once, before every other step")
		case st.verb == "start":
			sc.start = st.args[0]
			continue
		case sc.start == "":
			err = errors.New("the first step is start")
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, lineNo, err)
		}
		st.line = lineNo
		sc.steps = append(sc.steps, st)
	}
	if sc.start == "" {
		return nil, fmt.Errorf("%s: no start step", name)
	}
	return sc, nil
}

// parseStep reads one step line (without its comment).
func parseStep(raw string) (step, error) {
	st := step{text: raw, status: http.StatusOK}
	fields := strings.Fields(raw)
	if fields[0] == "status" {
		if len(fields) < 3 {
			return st, errors.New("status CODE STEP [| TEXT]")
		}
		code, err := strconv.Atoi(fields[1])
		if err != nil || code < 200 || code > 599 {
			return st, fmt.Errorf("bad status %q", fields[1])
		}
		st.status = code
		rest := strings.Join(fields[2:], " ")
		if before, msg, ok := strings.Cut(rest, "|"); ok {
			rest, st.errMsg = before, strings.TrimSpace(msg)
		}
		if fields = strings.Fields(rest); len(fields) == 0 {
			return st, errors.New("status CODE STEP [| TEXT]: no step")
		}
	}
	if fields[0] == "dry" {
		st.dry = true
		fields = fields[1:]
	}
	if i := slices.Index(fields, "->"); i >= 0 {
		cs, err := parseChanges(strings.Join(fields[i+1:], " "))
		if err != nil {
			return st, err
		}
		st.change = &cs
		fields = fields[:i]
	}
	if len(fields) == 0 {
		return st, errors.New("no step")
	}
	st.verb, st.args = fields[0], fields[1:]
	operator := st.verb == "skip" || st.verb == "reprocess" || st.verb == "backfill"
	if st.dry && !operator {
		return st, errors.New("dry goes with skip, reprocess or backfill")
	}
	if st.change != nil && !operator {
		return st, errors.New("-> goes with skip, reprocess or backfill")
	}
	if operator && (st.change == nil) != (st.status != http.StatusOK) {
		return st, fmt.Errorf(`%s: give "-> CHANGES" (or "-> none") when it answers 200, and only then`, st.verb)
	}
	nargs := func(lo, hi int) error {
		if len(st.args) < lo || (hi >= 0 && len(st.args) > hi) {
			return fmt.Errorf("%s: wrong number of arguments", st.verb)
		}
		return nil
	}
	var err error
	switch st.verb {
	case "start", "clock":
		if err = nargs(1, 1); err == nil {
			_, err = time.Parse(time.RFC3339Nano, st.args[0])
		}
	case "define":
		err = nargs(1, 1)
	case "tick":
		err = nargs(0, 0)
	case "expect":
		if err = nargs(3, 6); err == nil {
			_, err = parseExpect(st.args)
		}
	case "nodes":
		err = nargs(1, -1)
		for _, a := range st.args[min(1, len(st.args)):] {
			if k, s, ok := strings.Cut(a, "="); !ok || k == "" || s == "" {
				err = fmt.Errorf("nodes: want KEY=STATE, got %q", a)
			}
		}
	case "outstanding":
		_, err = parseOutstanding(st.args)
	case "begin":
		err = nargs(2, 2)
	case "complete":
		if err = nargs(3, 4); err == nil && len(st.args) == 4 {
			if _, ok := strings.CutPrefix(st.args[3], "run="); !ok {
				err = fmt.Errorf("complete: %q should be run=N", st.args[3])
			}
		}
	case "skip":
		err = nargs(2, -1)
	case "reprocess":
		err = nargs(2, 2)
	case "backfill":
		err = nargs(3, 3)
	default:
		err = fmt.Errorf("unknown step %q", st.verb)
	}
	return st, err
}

// parseChanges reads "none" or "P K FROM TO, P K FROM TO".
func parseChanges(s string) ([]nodeChange, error) {
	if strings.TrimSpace(s) == "none" {
		return []nodeChange{}, nil
	}
	var cs []nodeChange
	for _, part := range strings.Split(s, ",") {
		f := strings.Fields(part)
		if len(f) != 4 {
			return nil, fmt.Errorf("change %q: want PROCESS KEY FROM TO", strings.TrimSpace(part))
		}
		cs = append(cs, nodeChange{f[0], f[1], f[2], f[3]})
	}
	return cs, nil
}

// expectation is what an expect step asserts of a node.
type expectation struct {
	state    string
	failures int
	run      string // none, requested or running
	id       int64  // 0: not checked
}

func parseExpect(args []string) (expectation, error) {
	e := expectation{state: args[2], run: "none"}
	for _, a := range args[3:] {
		k, v, _ := strings.Cut(a, "=")
		var err error
		switch k {
		case "failures":
			e.failures, err = strconv.Atoi(v)
		case "run":
			if v != "none" && v != "requested" && v != "running" {
				err = fmt.Errorf("run must be none, requested or running")
			}
			e.run = v
		case "id":
			e.id, err = strconv.ParseInt(v, 10, 64)
		default:
			err = fmt.Errorf("unknown option %q", a)
		}
		if err != nil {
			return e, fmt.Errorf("expect: %v", err)
		}
	}
	if e.id != 0 && e.run == "none" {
		return e, fmt.Errorf("expect: id= needs run=requested or run=running")
	}
	return e, nil
}

// parseOutstanding reads "P K, P K" into "P K" strings, sorted.
func parseOutstanding(args []string) ([]string, error) {
	out := []string{}
	if len(args) == 0 {
		return out, nil
	}
	for _, part := range strings.Split(strings.Join(args, " "), ",") {
		f := strings.Fields(part)
		if len(f) != 2 {
			return nil, fmt.Errorf("outstanding: want PROCESS KEY, got %q", strings.TrimSpace(part))
		}
		out = append(out, f[0]+" "+f[1])
	}
	slices.Sort(out)
	return out, nil
}

// The answers the runner reads.
type (
	scNode struct {
		Process    string `json:"process"`
		Timeperiod string `json:"timeperiod"`
		State      string `json:"state"`
		Failures   int    `json:"failures"`
		Run        *struct {
			ID    int64  `json:"id"`
			State string `json:"state"`
		} `json:"run"`
	}
	scNodes struct {
		Nodes []scNode `json:"nodes"`
	}
	scChange struct {
		Process    string `json:"process"`
		Timeperiod string `json:"timeperiod"`
		From       string `json:"from"`
		To         string `json:"to"`
	}
	scChanged struct {
		Changed []scChange `json:"changed"`
	}
)

func (n scNode) String() string {
	run := "none"
	if n.Run != nil {
		run = fmt.Sprintf("%s id=%d", n.Run.State, n.Run.ID)
	}
	return fmt.Sprintf("%s %s %s failures=%d run=%s", n.Process, n.Timeperiod, n.State, n.Failures, run)
}

// TestScenariosParse checks that malformed scenario files are refused
// with their line.
func TestScenariosParse(t *testing.T) {
	t.Parallel()
	const head = "start 2024-01-01T00:00:00Z\n"
	for _, tt := range []struct{ text, want string }{
		{"clock 2024-01-01T01:00:00Z\n", "x.txt:1: the first step is start"},
		{head + head, "x.txt:2: start comes once"},
		{"start 2024-01-01\n", "x.txt:1: parsing time"},
		{head + "define a.json\n{}\n", `x.txt:2: define: no line "end"`},
		{head + "wait 5\n", `x.txt:2: unknown step "wait"`},
		{head + "expect p 2024010100\n", "x.txt:2: expect: wrong number of arguments"},
		{head + "expect p 2024010100 embryo run=queued\n", "x.txt:2: expect: run must be"},
		{head + "expect p 2024010100 embryo id=3\n", "x.txt:2: expect: id= needs"},
		{head + "nodes p 2024010100\n", "x.txt:2: nodes: want KEY=STATE"},
		{head + "outstanding p\n", "x.txt:2: outstanding: want PROCESS KEY"},
		{head + "skip p 2024010100\n", `x.txt:2: skip: give "-> CHANGES"`},
		{head + "status 409 skip p 2024010100 -> none\n", `x.txt:2: skip: give "-> CHANGES"`},
		{head + "skip p 2024010100 -> p 2024010100 embryo\n", "x.txt:2: change \"p 2024010100 embryo\""},
		{head + "complete p 2024010100 processed -> none\n", "x.txt:2: -> goes with skip, reprocess or backfill"},
		{head + "dry complete p 2024010100 processed\n", "x.txt:2: dry goes with skip, reprocess or backfill"},
		{head + "status 4O4 tick\n", `x.txt:2: bad status "4O4"`},
		{head + "status 404 | gone\n", "x.txt:2: status CODE STEP"},
		{"# nothing\n", "x.txt: no start step"},
	} {
		if _, err := parseScenario("x.txt", tt.text); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %s", tt.text, err, tt.want)
		}
	}
	sc, err := parseScenario("x.txt", head+"# BUG: wrong\ndefine a.json\n{\"trees\": []}\nend\ntick # now\nstatus 409 complete p 2024010100 noop | no run\n")
	if err != nil {
		t.Fatal(err)
	}
	if sc.bug != "x.txt:2: BUG: wrong" || len(sc.steps) != 3 || sc.steps[0].body != "{\"trees\": []}\n" ||
		sc.steps[1].text != "tick" || sc.steps[1].line != 6 || sc.steps[2].line != 7 || sc.steps[2].status != 409 || sc.steps[2].errMsg != "no run" {
		t.Errorf("parsed %+v", sc)
	}
}

// TestScenarios replays each scenario file against a server of its own.
func TestScenarios(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenario in testdata/scenarios")
	}
	for _, file := range files {
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := parseScenario(file, string(text))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			t.Parallel()
			if sc.bug != "" && !*scenarioBugs {
				t.Skipf("%s (the scenario asserts the specification; run with -scenario-bugs to see it fail)", sc.bug)
			}
			f := setup(t, simulateFrom(sc.start), func(c *ServerConfig) { c.Timezone = "UTC" })
			r := &replay{t: t, sc: sc, base: f.client.Base, http: &http.Client{Timeout: 30 * time.Second, Transport: testHTTP.Transport}}
			for i := range sc.steps {
				r.step(&sc.steps[i])
			}
		})
	}
}

// replay runs one scenario's steps against a server.
type replay struct {
	t    *testing.T
	sc   *scenario
	base string
	http *http.Client
}

// fatalf stops the scenario at step st.
func (r *replay) fatalf(st *step, format string, a ...any) {
	r.t.Helper()
	r.t.Fatalf("%s:%d: %s\n%s", r.sc.file, st.line, st.text, fmt.Sprintf(format, a...))
}

// errorf reports a failed assertion of step st and goes on.
func (r *replay) errorf(st *step, format string, a ...any) {
	r.t.Helper()
	r.t.Errorf("%s:%d: %s\n%s", r.sc.file, st.line, st.text, fmt.Sprintf(format, a...))
}

// call sends a request and returns the status and the body.
func (r *replay) call(st *step, method, path string, body any) (int, []byte) {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			r.fatalf(st, "%v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.base+path, rd)
	if err != nil {
		r.fatalf(st, "%v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := r.http.Do(req)
	if err != nil {
		r.fatalf(st, "%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.fatalf(st, "%s %s: %v", method, path, err)
	}
	return resp.StatusCode, b
}

// send sends the request of step st and checks its status against the
// step's; it returns the body, and whether the step goes on (a 200).
func (r *replay) send(st *step, method, path string, body any) ([]byte, bool) {
	r.t.Helper()
	code, b := r.call(st, method, path, body)
	if code != st.status {
		r.fatalf(st, "%s %s: status %d, want %d: %s", method, path, code, st.status, b)
	}
	if st.status != http.StatusOK {
		var e struct {
			Error  string   `json:"error"`
			Errors []string `json:"errors"`
		}
		if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
			r.fatalf(st, "%s %s: %d without an error message: %s", method, path, code, b)
		}
		if msg := e.Error + "\n" + strings.Join(e.Errors, "\n"); !strings.Contains(msg, st.errMsg) {
			r.errorf(st, "the error %q does not hold %q", msg, st.errMsg)
		}
		return b, false
	}
	return b, true
}

// get reads a GET answer that must be 200 into v.
func (r *replay) get(st *step, path string, v any) {
	r.t.Helper()
	code, b := r.call(st, "GET", path, nil)
	if code != http.StatusOK {
		r.fatalf(st, "GET %s: status %d: %s", path, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		r.fatalf(st, "GET %s: %v: %s", path, err, b)
	}
}

// snapshot reads every node of every process, the outstanding runs and
// the trees, to check that a step changed nothing.
func (r *replay) snapshot(st *step) string {
	r.t.Helper()
	var trees struct {
		Trees []struct {
			Levels []struct {
				Process string `json:"process"`
			} `json:"levels"`
		} `json:"trees"`
	}
	_, tb := r.call(st, "GET", "/api/v1/trees", nil)
	if err := json.Unmarshal(tb, &trees); err != nil {
		r.fatalf(st, "GET /api/v1/trees: %v: %s", err, tb)
	}
	var b strings.Builder
	b.Write(tb)
	for _, t := range trees.Trees {
		for _, l := range t.Levels {
			_, nb := r.call(st, "GET", "/api/v1/nodes?process="+url.QueryEscape(l.Process), nil)
			fmt.Fprintf(&b, "\n%s: %s", l.Process, nb)
		}
	}
	_, ob := r.call(st, "GET", "/api/v1/nodes?outstanding=true", nil)
	fmt.Fprintf(&b, "\noutstanding: %s", ob)
	return b.String()
}

// nodePath is the path of a node's action.
func nodePath(process, key, action string) string {
	return "/api/v1/nodes/" + url.PathEscape(process) + "/" + url.PathEscape(key) + "/" + action
}

func (r *replay) step(st *step) {
	r.t.Helper()
	var before string
	if st.dry || st.status >= 400 {
		before = r.snapshot(st)
	}
	switch st.verb {
	case "define":
		r.send(st, "POST", "/api/v1/definitions", map[string]string{"file": st.args[0], "text": st.body})
	case "clock":
		if b, ok := r.send(st, "POST", "/api/v1/clock", map[string]string{"to": st.args[0]}); ok {
			var c struct {
				Now       time.Time `json:"now"`
				Simulated bool      `json:"simulated"`
			}
			want, _ := time.Parse(time.RFC3339Nano, st.args[0])
			if err := json.Unmarshal(b, &c); err != nil || !c.Now.Equal(want) || !c.Simulated {
				r.errorf(st, "the clock answered %s", b)
			}
		}
	case "tick":
		r.send(st, "POST", "/api/v1/clock", map[string]bool{"tick": true})
	case "expect":
		r.expect(st)
	case "nodes":
		r.nodes(st)
	case "outstanding":
		r.outstanding(st)
	case "begin":
		r.send(st, "POST", nodePath(st.args[0], st.args[1], "start"), nil)
	case "complete":
		body := map[string]any{"outcome": st.args[2]}
		if len(st.args) == 4 {
			id, err := strconv.ParseInt(strings.TrimPrefix(st.args[3], "run="), 10, 64)
			if err != nil {
				r.errorf(st, "complete: %v", err)
				return
			}
			body["run"] = id
		}
		r.send(st, "POST", nodePath(st.args[0], st.args[1], "complete"), body)
	case "skip", "reprocess", "backfill":
		r.operate(st)
	}
	if before != "" {
		if after := r.snapshot(st); after != before {
			r.errorf(st, "the step changed the state:\n--- before\n%s\n--- after\n%s", before, after)
		}
	}
}

func (r *replay) expect(st *step) {
	r.t.Helper()
	e, _ := parseExpect(st.args)
	process, key := st.args[0], st.args[1]
	var ns scNodes
	r.get(st, "/api/v1/nodes?process="+url.QueryEscape(process)+"&from="+url.QueryEscape(key)+"&to="+url.QueryEscape(key), &ns)
	if len(ns.Nodes) != 1 || ns.Nodes[0].Timeperiod != key || ns.Nodes[0].Process != process {
		r.errorf(st, "no node %s %s: %+v", process, key, ns.Nodes)
		return
	}
	n := ns.Nodes[0]
	run := "none"
	var id int64
	if n.Run != nil {
		run, id = n.Run.State, n.Run.ID
	}
	if n.State != e.state || n.Failures != e.failures || run != e.run || (e.id != 0 && id != e.id) {
		r.errorf(st, "got  %s", n)
	}
}

func (r *replay) nodes(st *step) {
	r.t.Helper()
	var ns scNodes
	b, ok := r.send(st, "GET", "/api/v1/nodes?process="+url.QueryEscape(st.args[0]), nil)
	if !ok {
		return
	}
	if err := json.Unmarshal(b, &ns); err != nil {
		r.fatalf(st, "%v: %s", err, b)
	}
	got := make([]string, 0, len(ns.Nodes))
	for _, n := range ns.Nodes {
		got = append(got, n.Timeperiod+"="+n.State)
	}
	if want := st.args[1:]; !slices.Equal(got, want) {
		r.errorf(st, "got  nodes %s %s", st.args[0], strings.Join(got, " "))
	}
}

func (r *replay) outstanding(st *step) {
	r.t.Helper()
	want, _ := parseOutstanding(st.args)
	var ns scNodes
	r.get(st, "/api/v1/nodes?outstanding=true", &ns)
	got := make([]string, 0, len(ns.Nodes))
	var desc []string
	for _, n := range ns.Nodes {
		got = append(got, n.Process+" "+n.Timeperiod)
		desc = append(desc, n.String())
		if n.Run == nil {
			r.errorf(st, "an outstanding node without a run: %s", n)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		if len(got) == 0 {
			got, desc = []string{"none"}, []string{"no run outstanding"}
		}
		r.errorf(st, "got  outstanding %s\n(%s)", strings.Join(got, ", "), strings.Join(desc, "; "))
	}
}

func (r *replay) operate(st *step) {
	r.t.Helper()
	path := nodePath(st.args[0], st.args[1], st.verb)
	if st.dry {
		path += "?dry_run=true"
	}
	var body any
	if len(st.args) > 2 {
		body = map[string][]string{"timeperiods": st.args[2:]}
	}
	if st.verb == "backfill" {
		path = "/api/v1/tasks/" + url.PathEscape(st.args[0]) + "/backfill"
		body = map[string]any{"from": st.args[1], "to": st.args[2], "dry_run": st.dry}
	}
	b, ok := r.send(st, "POST", path, body)
	if !ok {
		return
	}
	var resp scChanged
	if err := json.Unmarshal(b, &resp); err != nil || resp.Changed == nil {
		r.fatalf(st, "bad answer %s (%v)", b, err)
	}
	var got, want []string
	for _, c := range resp.Changed {
		got = append(got, nodeChange{c.Process, c.Timeperiod, c.From, c.To}.String())
	}
	for _, c := range *st.change {
		want = append(want, c.String())
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		r.errorf(st, "got  changed %s", strings.Join(formatChanges(resp.Changed), ", "))
	}
}

// formatChanges writes an answer's changes in the order of the answer, as
// a scenario writes them.
func formatChanges(cs []scChange) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, nodeChange{c.Process, c.Timeperiod, c.From, c.To}.String())
	}
	if len(out) == 0 {
		out = append(out, "none")
	}
	return out
}
