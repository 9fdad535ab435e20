package periods

import (
	"bytes"
	"cmp"
	"fmt"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

// Problem is one error in a tree file: where it is, as a line and a JSON
// path such as trees[0].levels[1].qualifier, and what is wrong.
type Problem struct {
	File string
	Line int // 1-based; 0 when unknown
	Path string
	Msg  string
}

// String formats the problem as "file:line: path: message". A control
// character (of a key in the path, say) is written as an escape (see
// termsafe.String), so that the problem prints on one line.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return termsafe.String(b.String())
}

// Problems is every error found in a tree file, sorted by path. It is the
// error Parse returns, and the one Apply returns for a bad Define; match it
// with errors.As.
type Problems []Problem

// Error lists the problems, one per line.
func (ps Problems) Error() string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "\n")
}

// Options tells Parse what lies outside the file. A nil field means
// nothing there: no other jobs, no other trees, and every well-formed
// function name is registered.
type Options struct {
	// NameTakenFunc reports whether a name already belongs to a job of
	// another kind; a process may not take it.
	NameTakenFunc func(name string) bool
	// FunctionKnownFunc reports whether a function name is registered.
	FunctionKnownFunc func(name string) bool
	// OwnerFunc says why a level's command may not run as owner, or nil
	// if it may; nil accepts every well-formed owner.
	OwnerFunc func(owner string) error
	// TreeFunc describes a tree defined in another file: that file's name
	// and the trees it depends on. dependentOn may name such trees, and
	// the file may not define one again.
	TreeFunc func(name string) (file string, dependentOn []string, ok bool)
	// ProcessFunc reports the tree and file of a process defined in
	// another file; the file may not define it again.
	ProcessFunc func(name string) (tree, file string, ok bool)

	// stored says that the file is one the forest wrote and accepted
	// before (Restore): the checks on the characters of strings, added
	// since, are not applied to it, so that a restart never refuses what
	// was accepted.
	stored bool
}

// Limits on values.
const (
	maxLagMinutes  = 366 * 24 * 60
	maxMaxFailures = 1000
	maxName        = 64
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// Parse reads and validates a tree file. On any error it returns
// Problems holding every error of the file, each naming file, line and
// JSON path.
//
// A file that is not UTF-8 is refused at the line of its first invalid
// byte (encoding/json would read it as U+FFFD without a word), and so is
// a string that holds a NUL (\u0000) or half of an escaped surrogate pair
// (\ud800). Names hold letters, digits and underscores only. A command
// holds printable text, tabs and newlines (a script of several lines): a
// control character or a bidirectional formatting character (see
// termsafe.Unsafe) is refused, as in the task language.
func Parse(file string, data []byte, opts Options) (*File, error) {
	c := &checker{file: file, data: data, opts: opts}
	if !utf8.Valid(data) {
		bad := 0
		for bad < len(data) {
			r, n := utf8.DecodeRune(data[bad:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			bad += n
		}
		return nil, Problems{{File: file, Line: c.line(bad), Msg: fmt.Sprintf("not UTF-8 text: byte 0x%02x (column %d) is not UTF-8; save the file as UTF-8",
			data[bad], bad-bytes.LastIndexByte(data[:bad], '\n'))}}
	}
	v, err := readJSON(data)
	if err != nil {
		je := err.(*jsonError)
		return nil, Problems{{File: file, Line: c.line(je.off), Msg: je.msg}}
	}
	f := c.file1(v)
	if len(c.probs) > 0 {
		c.probs.sort()
		return nil, c.probs
	}
	return f, nil
}

// sort orders problems by path, then line, then message.
func (ps Problems) sort() {
	slices.SortStableFunc(ps, func(a, b Problem) int {
		if n := comparePaths(a.Path, b.Path); n != 0 {
			return n
		}
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return strings.Compare(a.Msg, b.Msg)
	})
}

type checker struct {
	file  string
	data  []byte
	opts  Options
	probs Problems
	lines []int // offsets where lines start, made on first use
}

func (c *checker) line(off int) int {
	if c.lines == nil {
		c.lines = []int{0}
		for i, b := range c.data {
			if b == '\n' {
				c.lines = append(c.lines, i+1)
			}
		}
	}
	n, found := slices.BinarySearch(c.lines, off)
	if found {
		return n + 1
	}
	return n
}

func (c *checker) errorf(off int, path, format string, args ...any) {
	c.probs = append(c.probs, Problem{File: c.file, Line: c.line(off), Path: path, Msg: fmt.Sprintf(format, args...)})
}

// object checks that v is an object with only the given keys, reports
// the others, and returns the members by key.
func (c *checker) object(v *jval, path string, keys ...string) (map[string]jmember, bool) {
	if v.kind != 'o' {
		c.errorf(v.off, path, "expected an object, not %s", v.kindName())
		return nil, false
	}
	m := make(map[string]jmember, len(v.obj))
	for _, mb := range v.obj {
		if !slices.Contains(keys, mb.key) {
			c.errorf(mb.off, join(path, mb.key), "unknown key (want one of %s)", strings.Join(keys, ", "))
			continue
		}
		m[mb.key] = mb
	}
	return m, true
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

func (c *checker) str(v *jval, path string) (string, bool) {
	if v.kind != 's' {
		c.errorf(v.off, path, "expected a string, not %s", v.kindName())
		return "", false
	}
	if v.lossy != "" && !c.opts.stored {
		c.errorf(v.off, path, "%s", v.lossy)
		return "", false
	}
	return v.str, true
}

func (c *checker) integer(v *jval, path string, lo, hi int) (int, bool) {
	if v.kind != 'n' {
		c.errorf(v.off, path, "expected an integer, not %s", v.kindName())
		return 0, false
	}
	n, err := strconv.ParseInt(v.str, 10, 64)
	if err != nil {
		c.errorf(v.off, path, "expected an integer, not %s", v.str)
		return 0, false
	}
	if n < int64(lo) || n > int64(hi) {
		c.errorf(v.off, path, "%d out of range %d..%d", n, lo, hi)
		return 0, false
	}
	return int(n), true
}

func (c *checker) name(v *jval, path, what string) (string, bool) {
	s, ok := c.str(v, path)
	if !ok {
		return "", false
	}
	switch {
	case s == "":
		c.errorf(v.off, path, "empty %s", what)
	case !nameRE.MatchString(s):
		c.errorf(v.off, path, "%s %q: use only letters, digits and underscores", what, s)
	case len(s) > maxName:
		c.errorf(v.off, path, "%s %q is longer than %d characters", what, s, maxName)
	default:
		return s, true
	}
	return s, false
}

// parsed tree, with what the checks across trees need.
type ptree struct {
	Tree
	off     int
	path    string
	depOffs []int
	lvlOffs []int
	// lvlIdx is the index in the file of each level of Levels, which
	// are ordered by qualifier.
	lvlIdx []int
	start  bool // StartTimeperiod set on the tree or the file
}

func (c *checker) file1(v *jval) *File {
	f := &File{}
	m, ok := c.object(v, "", "settings", "trees")
	if !ok {
		return f
	}
	if s, ok := m["settings"]; ok {
		f.Settings = c.settings(s.val, "settings")
	}
	ts, ok := m["trees"]
	if !ok {
		c.errorf(v.off, "trees", "missing")
		return f
	}
	if ts.val.kind != 'a' {
		c.errorf(ts.val.off, "trees", "expected an array, not %s", ts.val.kindName())
		return f
	}
	var trees []*ptree
	for i, tv := range ts.val.arr {
		trees = append(trees, c.tree(tv, index("trees", i), f.Settings.StartTimeperiod != 0))
	}
	c.across(trees)
	for _, t := range trees {
		f.Trees = append(f.Trees, t.Tree)
	}
	return f
}

func (c *checker) settings(v *jval, path string) Settings {
	var s Settings
	m, ok := c.object(v, path, "startTimeperiod", "lagMinutes", "maxFailures", "timezone")
	if !ok {
		return s
	}
	if mb, ok := m["startTimeperiod"]; ok {
		p := join(path, "startTimeperiod")
		if str, ok := c.str(mb.val, p); ok {
			k, err := Hourly.Parse(str)
			if err != nil {
				c.errorf(mb.val.off, p, "%v", err)
			} else {
				s.StartTimeperiod = k
			}
		}
	}
	if mb, ok := m["lagMinutes"]; ok {
		if n, ok := c.integer(mb.val, join(path, "lagMinutes"), 0, maxLagMinutes); ok {
			s.LagMinutes = &n
		}
	}
	if mb, ok := m["maxFailures"]; ok {
		if n, ok := c.integer(mb.val, join(path, "maxFailures"), 0, maxMaxFailures); ok {
			s.MaxFailures = &n
		}
	}
	if mb, ok := m["timezone"]; ok {
		p := join(path, "timezone")
		if str, ok := c.str(mb.val, p); ok {
			if str != "UTC" {
				c.errorf(mb.val.off, p, "time zone %q: only UTC is supported (keys are UTC; displays may convert)", str)
			} else {
				s.Timezone = str
			}
		}
	}
	return s
}

func (c *checker) tree(v *jval, path string, fileStart bool) *ptree {
	t := &ptree{off: v.off, path: path}
	m, ok := c.object(v, path, "name", "dependentOn", "settings", "levels")
	if !ok {
		return t
	}
	if mb, ok := m["name"]; ok {
		t.Name, _ = c.name(mb.val, join(path, "name"), "tree name")
	} else {
		c.errorf(v.off, join(path, "name"), "missing")
	}
	if mb, ok := m["dependentOn"]; ok {
		p := join(path, "dependentOn")
		if mb.val.kind != 'a' {
			c.errorf(mb.val.off, p, "expected an array, not %s", mb.val.kindName())
		}
		for i, dv := range mb.val.arr {
			if s, ok := c.str(dv, index(p, i)); ok {
				t.DependentOn = append(t.DependentOn, s)
				t.depOffs = append(t.depOffs, dv.off)
			}
		}
	}
	if mb, ok := m["settings"]; ok {
		t.Settings = c.settings(mb.val, join(path, "settings"))
	}
	t.start = fileStart || t.Settings.StartTimeperiod != 0
	if !t.start {
		c.errorf(v.off, join(path, "settings.startTimeperiod"), "missing: set it in the tree's settings or the file's")
	}
	mb, ok := m["levels"]
	if !ok {
		c.errorf(v.off, join(path, "levels"), "missing")
		return t
	}
	p := join(path, "levels")
	if mb.val.kind != 'a' {
		c.errorf(mb.val.off, p, "expected an array, not %s", mb.val.kindName())
		return t
	}
	if n := len(mb.val.arr); n < 1 || n > 4 {
		c.errorf(mb.val.off, p, "a tree has 1 to 4 levels, not %d", n)
	}
	seen := map[Qualifier]int{}
	for i, lv := range mb.val.arr {
		lp := index(p, i)
		l := c.level(lv, lp)
		t.Levels = append(t.Levels, l)
		t.lvlOffs = append(t.lvlOffs, lv.off)
		t.lvlIdx = append(t.lvlIdx, i)
		if l.Qualifier == 0 {
			continue
		}
		if j, dup := seen[l.Qualifier]; dup {
			c.errorf(lv.off, join(lp, "qualifier"), "duplicate qualifier %s (also levels[%d])", l.Qualifier, j)
			continue
		}
		seen[l.Qualifier] = i
	}
	// Levels may be listed in any order: they are taken coarsest first.
	order := make([]int, len(t.Levels))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(t.Levels[b].Qualifier, t.Levels[a].Qualifier) })
	levels, offs, idx := slices.Clone(t.Levels), slices.Clone(t.lvlOffs), slices.Clone(t.lvlIdx)
	for i, j := range order {
		t.Levels[i], t.lvlOffs[i], t.lvlIdx[i] = levels[j], offs[j], idx[j]
	}
	return t
}

func (c *checker) level(v *jval, path string) Level {
	var l Level
	m, ok := c.object(v, path, "process", "qualifier", "stateMachine", "blocking", "command", "owner", "function", "every", "alertOn", "alertTo")
	if !ok {
		return l
	}
	if mb, ok := m["process"]; ok {
		l.Process, _ = c.name(mb.val, join(path, "process"), "process name")
	} else {
		c.errorf(v.off, join(path, "process"), "missing")
	}
	if mb, ok := m["qualifier"]; ok {
		p := join(path, "qualifier")
		if s, ok := c.str(mb.val, p); ok {
			q, err := ParseQualifier(s)
			if err != nil {
				c.errorf(mb.val.off, p, "%v", err)
			}
			l.Qualifier = q
		}
	} else {
		c.errorf(v.off, join(path, "qualifier"), "missing")
	}
	if mb, ok := m["stateMachine"]; ok {
		p := join(path, "stateMachine")
		if s, ok := c.str(mb.val, p); ok {
			sm, err := ParseStateMachine(s)
			if err != nil {
				c.errorf(mb.val.off, p, "%v", err)
			}
			l.StateMachine = sm
		}
	}
	if mb, ok := m["blocking"]; ok {
		p := join(path, "blocking")
		if s, ok := c.str(mb.val, p); ok {
			b, err := ParseBlocking(s)
			if err != nil {
				c.errorf(mb.val.off, p, "%v", err)
			}
			l.Blocking = b
		}
	}
	if mb, ok := m["command"]; ok {
		p := join(path, "command")
		if s, ok := c.str(mb.val, p); ok {
			if strings.TrimSpace(s) == "" {
				c.errorf(mb.val.off, p, "empty command: leave the key out for an external worker")
			} else if msg := checkCommand(s); msg != "" && !c.opts.stored {
				c.errorf(mb.val.off, p, "%s", msg)
			} else {
				l.Command = s
			}
		}
	}
	if mb, ok := m["function"]; ok {
		p := join(path, "function")
		if s, ok := c.name(mb.val, p, "function name"); ok {
			if c.opts.FunctionKnownFunc != nil && !c.opts.FunctionKnownFunc(s) {
				c.errorf(mb.val.off, p, "function %q is not registered", s)
			}
			l.Function = s
		}
	}
	if mb, ok := m["owner"]; ok {
		p := join(path, "owner")
		if s, ok := c.str(mb.val, p); ok {
			switch err := job.CheckOwner(s); {
			case err != nil:
				c.errorf(mb.val.off, p, "%v", err)
			case l.Command == "" && !c.opts.stored:
				c.errorf(mb.val.off, p, "owner: a level without a command runs nothing as its owner (give it a command, or remove owner)")
			case c.opts.OwnerFunc != nil && !c.opts.stored:
				if err := c.opts.OwnerFunc(s); err != nil {
					c.errorf(mb.val.off, p, "owner: %v", err)
				} else {
					l.Owner = s
				}
			default:
				l.Owner = s
			}
		}
	}
	if l.Command != "" && l.Function != "" {
		c.errorf(v.off, path, "command and function are both set: a level runs one of them, or neither for an external worker")
	}
	if mb, ok := m["every"]; ok {
		p := join(path, "every")
		if s, ok := c.str(mb.val, p); ok {
			d, err := time.ParseDuration(s)
			switch {
			case err != nil:
				c.errorf(mb.val.off, p, "bad duration %q: want a Go duration such as \"90s\" or \"15m\"", s)
			case d < time.Second || d > 24*time.Hour || d%time.Second != 0:
				c.errorf(mb.val.off, p, "every %s: want whole seconds from 1s to 24h", s)
			case l.StateMachine != Continuous:
				c.errorf(mb.val.off, p, "every applies only to continuous levels (a discrete period runs when it is due)")
			default:
				l.Every = d
			}
		}
	}
	// Alerts need both keys, as alert_on and alert_to do for tasks.
	on, hasOn := m["alertOn"]
	if hasOn {
		l.AlertOn = c.list(on.val, join(path, "alertOn"), "outcome", checkOutcome)
	}
	to, hasTo := m["alertTo"]
	if hasTo {
		l.AlertTo = c.list(to.val, join(path, "alertTo"), "address", checkAddress)
	}
	switch {
	case hasOn && !hasTo:
		c.errorf(v.off, join(path, "alertTo"), "missing: alertOn needs alertTo, the addresses to email")
	case hasTo && !hasOn:
		c.errorf(v.off, join(path, "alertOn"), "missing: alertTo needs alertOn, the outcomes to email on (success, failure)")
	}
	return l
}

// list reads a non-empty array of distinct strings, each of them a what
// that check accepts: it returns "" or what is wrong with the item.
func (c *checker) list(v *jval, path, what string, check func(string) string) []string {
	if v.kind != 'a' {
		c.errorf(v.off, path, "expected an array, not %s", v.kindName())
		return nil
	}
	if len(v.arr) == 0 {
		c.errorf(v.off, path, "empty list: leave out alertOn and alertTo for no alerts")
		return nil
	}
	var out []string
	seen := map[string]int{}
	for i, iv := range v.arr {
		p := index(path, i)
		s, ok := c.str(iv, p)
		if !ok {
			continue
		}
		if msg := check(s); msg != "" {
			c.errorf(iv.off, p, "%s", msg)
			continue
		}
		if j, dup := seen[s]; dup {
			c.errorf(iv.off, p, "%s %q listed twice (also [%d])", what, s, j)
			continue
		}
		seen[s] = i
		out = append(out, s)
	}
	return out
}

// checkCommand returns what is wrong with a command that holds a
// character it may not (see Parse), or "".
func checkCommand(s string) string {
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n' || !termsafe.Unsafe(r):
		case r > 0x9f:
			return fmt.Sprintf("holds the bidirectional formatting character %U, which shows the text around it in another order than it runs", r)
		default:
			return fmt.Sprintf("holds the control character %U (a command holds printable text, tabs and newlines)", r)
		}
	}
	return ""
}

// checkOutcome accepts the outcomes a level alerts on.
func checkOutcome(s string) string {
	if s != "success" && s != "failure" {
		return fmt.Sprintf("unknown outcome %q (want success or failure)", s)
	}
	return ""
}

// checkAddress accepts a bare email address, user@host, without a display
// name or angle brackets: the rule of the task language's alert_to.
func checkAddress(s string) string {
	if a, err := mail.ParseAddress(s); err != nil || a.Name != "" || a.Address != s {
		return fmt.Sprintf("%q is not an email address such as ops@example.com", s)
	}
	return ""
}

// across checks what spans trees: names, dependencies and cycles.
func (c *checker) across(trees []*ptree) {
	byName := map[string]*ptree{}
	procs := map[string]string{} // process → path of its level
	for _, t := range trees {
		if t.Name != "" {
			if o, dup := byName[t.Name]; dup {
				c.errorf(t.off, join(t.path, "name"), "duplicate tree name %q (also %s)", t.Name, o.path)
			} else {
				byName[t.Name] = t
				if c.opts.TreeFunc != nil {
					if file, _, ok := c.opts.TreeFunc(t.Name); ok {
						c.errorf(t.off, join(t.path, "name"), "tree %q is already defined in %s", t.Name, file)
					}
				}
			}
		}
		for j, l := range t.Levels {
			if l.Process == "" {
				continue
			}
			lp := index(join(t.path, "levels"), t.lvlIdx[j])
			if o, dup := procs[l.Process]; dup {
				c.errorf(t.lvlOffs[j], join(lp, "process"), "duplicate process name %q (also %s)", l.Process, o)
				continue
			}
			procs[l.Process] = lp
			if c.opts.ProcessFunc != nil {
				if tree, file, ok := c.opts.ProcessFunc(l.Process); ok {
					c.errorf(t.lvlOffs[j], join(lp, "process"), "process %q is already defined in tree %q of %s", l.Process, tree, file)
					continue
				}
			}
			if c.opts.NameTakenFunc != nil && c.opts.NameTakenFunc(l.Process) {
				c.errorf(t.lvlOffs[j], join(lp, "process"), "name %q is already taken by another job", l.Process)
			}
		}
	}
	// dependentOn: known names, no repeats; then cycles.
	deps := func(name string) []string {
		if t, ok := byName[name]; ok {
			return t.DependentOn
		}
		if c.opts.TreeFunc != nil {
			if _, d, ok := c.opts.TreeFunc(name); ok {
				return d
			}
		}
		return nil
	}
	known := func(name string) bool {
		if _, ok := byName[name]; ok {
			return true
		}
		if c.opts.TreeFunc != nil {
			_, _, ok := c.opts.TreeFunc(name)
			return ok
		}
		return false
	}
	for _, t := range trees {
		seen := map[string]bool{}
		for j, d := range t.DependentOn {
			p := index(join(t.path, "dependentOn"), j)
			switch {
			case seen[d]:
				c.errorf(t.depOffs[j], p, "tree %q listed twice", d)
			case d == t.Name:
				c.errorf(t.depOffs[j], p, "tree %q depends on itself", d)
			case !known(d):
				c.errorf(t.depOffs[j], p, "unknown tree %q", d)
			}
			seen[d] = true
		}
	}
	// A cycle through the file's trees is reported once, at the edge
	// that closes it in a depth-first walk from the first tree on it.
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	reported := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		color[name] = grey
		stack = append(stack, name)
		for j, d := range deps(name) {
			if d == name || !known(d) {
				continue
			}
			switch color[d] {
			case white:
				visit(d)
			case grey:
				i := slices.Index(stack, d)
				cycle := append(slices.Clone(stack[i:]), d)
				members := slices.Clone(stack[i:])
				slices.Sort(members)
				id := strings.Join(members, ",")
				if reported[id] {
					continue
				}
				reported[id] = true
				// Report at the closing edge when the file defines it,
				// otherwise at the first file tree on the cycle.
				if t, ok := byName[name]; ok {
					c.errorf(t.depOffs[j], index(join(t.path, "dependentOn"), j), "cyclic dependentOn: %s", strings.Join(cycle, " → "))
				} else {
					for _, n := range stack[i:] {
						if t, ok := byName[n]; ok {
							c.errorf(t.off, join(t.path, "dependentOn"), "cyclic dependentOn: %s", strings.Join(cycle, " → "))
							break
						}
					}
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[name] = black
	}
	for _, t := range trees {
		if t.Name != "" && color[t.Name] == white && byName[t.Name] == t {
			visit(t.Name)
		}
	}
}

// comparePaths orders JSON paths by their segments, indexes numerically:
// trees[2] before trees[10].
func comparePaths(a, b string) int {
	for a != "" && b != "" {
		sa, ra := nextSegment(a)
		sb, rb := nextSegment(b)
		if n := compareSegments(sa, sb); n != 0 {
			return n
		}
		a, b = ra, rb
	}
	return len(a) - len(b)
}

func nextSegment(p string) (string, string) {
	if p[0] == '.' {
		p = p[1:]
	}
	if p != "" && p[0] == '[' {
		i := strings.IndexByte(p, ']')
		if i < 0 {
			return p, ""
		}
		return p[:i+1], p[i+1:]
	}
	i := strings.IndexAny(p, ".[")
	if i < 0 {
		return p, ""
	}
	return p[:i], p[i:]
}

func compareSegments(a, b string) int {
	ai := strings.HasPrefix(a, "[")
	bi := strings.HasPrefix(b, "[")
	if ai && bi {
		x, _ := strconv.Atoi(strings.Trim(a, "[]"))
		y, _ := strconv.Atoi(strings.Trim(b, "[]"))
		return x - y
	}
	if ai != bi {
		if ai {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}
