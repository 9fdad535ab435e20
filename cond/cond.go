// Package cond parses and evaluates task conditions such as
// "su(a) & (fa(b) | nr(c))".
//
// Grammar (white space allowed between tokens, not inside a name):
//
//	expr   := term   { "|" term }
//	term   := factor { "&" factor }
//	factor := clause | "(" expr ")"
//	clause := ("su" | "fa" | "nr") "(" NAME ")"
//	NAME   := [A-Za-z0-9_]{1,64}
//
// "&" binds tighter than "|". Prefixes are case-insensitive.
package cond

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gnomon-sched/gnomon/job"
)

// Op is a clause prefix.
type Op uint8

// Clause prefixes.
const (
	Su Op = iota // the task succeeded
	Fa           // the task failed
	Nr           // the task is neither ready nor running
)

// Expr is a parsed condition. It is immutable and safe for concurrent use.
type Expr struct {
	root  node
	text  string   // canonical text
	names []string // referenced tasks, sorted, unique
	deps  []string // tasks named in su or fa clauses, sorted, unique
}

type node interface {
	eval(func(string) job.Status) bool
}

type clause struct {
	op   Op
	name string
}

type and []node
type or []node

func (c clause) eval(status func(string) job.Status) bool {
	s := status(c.name)
	if s == job.Frozen {
		return true // a frozen task satisfies every clause (AutoSys ON_ICE)
	}
	switch c.op {
	case Su:
		return s == job.Success
	case Fa:
		return s == job.Failure
	default:
		return s != job.Ready && s != job.Running
	}
}

func (a and) eval(status func(string) job.Status) bool {
	for _, n := range a {
		if !n.eval(status) {
			return false
		}
	}
	return true
}

func (o or) eval(status func(string) job.Status) bool {
	for _, n := range o {
		if n.eval(status) {
			return true
		}
	}
	return false
}

// Eval reports whether the condition holds, reading each named task's
// current status through status.
func (e *Expr) Eval(status func(name string) job.Status) bool { return e.root.eval(status) }

// String returns the canonical form: white space removed, prefixes in lower
// case, parentheses as written.
func (e *Expr) String() string { return e.text }

// Names returns the tasks the condition refers to, sorted and unique. The
// caller must not modify the slice.
func (e *Expr) Names() []string { return e.names }

// Deps returns the tasks named in su or fa clauses, sorted and unique: the
// tasks whose completion this condition waits for. nr clauses are left out.
// The caller must not modify the slice.
func (e *Expr) Deps() []string { return e.deps }

// Error is a syntax error at a 1-based character position of the input.
type Error struct {
	Pos    int
	Detail string
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid condition: %s at position %d", e.Detail, e.Pos)
}

// MaxName is the longest allowed task name.
const MaxName = 64

// Parse parses a condition.
func Parse(s string) (*Expr, error) {
	p := &parser{src: s}
	p.next()
	root, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.errorf("unexpected %s", p.tok)
	}
	slices.Sort(p.names)
	slices.Sort(p.deps)
	return &Expr{root: root, text: p.canon.String(), names: slices.Compact(p.names), deps: slices.Compact(p.deps)}, nil
}

// MustParse is Parse for conditions known to be valid; it panics on error.
func MustParse(s string) *Expr {
	e, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return e
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tLParen
	tRParen
	tAnd
	tOr
	tWord
	tBad
)

type token struct {
	kind tokKind
	text string
	pos  int // 1-based
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of condition"
	case tWord:
		return fmt.Sprintf("%q", t.text)
	default:
		return fmt.Sprintf("%q", t.text)
	}
}

type parser struct {
	src   string
	off   int
	tok   token
	canon strings.Builder
	names []string
	deps  []string
}

func (p *parser) errorf(format string, args ...any) error {
	return &Error{Pos: p.tok.pos, Detail: fmt.Sprintf(format, args...)}
}

func isNameByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// next scans the next token into p.tok.
func (p *parser) next() {
	for p.off < len(p.src) && (p.src[p.off] == ' ' || p.src[p.off] == '\t') {
		p.off++
	}
	pos := p.off + 1
	if p.off >= len(p.src) {
		p.tok = token{kind: tEOF, pos: pos}
		return
	}
	c := p.src[p.off]
	switch c {
	case '(':
		p.off++
		p.tok = token{tLParen, "(", pos}
	case ')':
		p.off++
		p.tok = token{tRParen, ")", pos}
	case '&':
		p.off++
		p.tok = token{tAnd, "&", pos}
	case '|':
		p.off++
		p.tok = token{tOr, "|", pos}
	default:
		if !isNameByte(c) {
			r := []rune(p.src[p.off:])[0]
			p.tok = token{tBad, string(r), pos}
			return
		}
		start := p.off
		for p.off < len(p.src) && isNameByte(p.src[p.off]) {
			p.off++
		}
		p.tok = token{tWord, p.src[start:p.off], pos}
	}
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 100

func (p *parser) expr(depth int) (node, error) {
	var terms or
	for {
		t, err := p.term(depth)
		if err != nil {
			return nil, err
		}
		terms = append(terms, t)
		if p.tok.kind != tOr {
			break
		}
		p.canon.WriteByte('|')
		p.next()
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return terms, nil
}

func (p *parser) term(depth int) (node, error) {
	var factors and
	for {
		f, err := p.factor(depth)
		if err != nil {
			return nil, err
		}
		factors = append(factors, f)
		if p.tok.kind != tAnd {
			break
		}
		p.canon.WriteByte('&')
		p.next()
	}
	if len(factors) == 1 {
		return factors[0], nil
	}
	return factors, nil
}

func (p *parser) factor(depth int) (node, error) {
	switch p.tok.kind {
	case tLParen:
		if depth >= maxDepth {
			return nil, p.errorf("parentheses nested deeper than %d", maxDepth)
		}
		p.canon.WriteByte('(')
		p.next()
		n, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			return nil, p.errorf("expected \")\" but found %s", p.tok)
		}
		p.canon.WriteByte(')')
		p.next()
		return n, nil
	case tWord:
		return p.clause()
	case tEOF:
		return nil, p.errorf("expected a clause such as su(name) but the condition ended")
	default:
		return nil, p.errorf("expected a clause such as su(name) but found %s", p.tok)
	}
}

// jilStatus are the status words of AutoSys's conditions, with how
// gnomon writes them.
var jilStatus = map[string]string{
	"success": "AutoSys's success(x) is su(x)", "s": "AutoSys's s(x) is su(x)",
	"failure": "AutoSys's failure(x) is fa(x)", "f": "AutoSys's f(x) is fa(x)",
	"notrunning": "AutoSys's notrunning(x) is nr(x)", "n": "AutoSys's n(x) is nr(x)",
	"done": "AutoSys's done(x) is (su(x) | fa(x))", "d": "AutoSys's d(x) is (su(x) | fa(x))",
	"terminated": "gnomon records a killed run as a failure: fa(x)", "t": "gnomon records a killed run as a failure: fa(x)",
}

func (p *parser) clause() (node, error) {
	var op Op
	switch strings.ToLower(p.tok.text) {
	case "su":
		op = Su
	case "fa":
		op = Fa
	case "nr":
		op = Nr
	default:
		if g, ok := jilStatus[strings.ToLower(p.tok.text)]; ok {
			return nil, p.errorf("unknown status prefix %s (want su, fa or nr; %s)", p.tok, g)
		}
		return nil, p.errorf("unknown status prefix %s (want su, fa or nr)", p.tok)
	}
	prefix := strings.ToLower(p.tok.text)
	p.next()
	if p.tok.kind != tLParen {
		return nil, p.errorf("expected \"(\" after %s but found %s", prefix, p.tok)
	}
	p.next()
	if p.tok.kind != tWord {
		return nil, p.errorf("expected a task name but found %s", p.tok)
	}
	name := p.tok
	if len(name.text) > MaxName {
		return nil, p.errorf("task name longer than %d characters", MaxName)
	}
	p.next()
	if p.tok.kind != tRParen {
		if p.tok.kind == tWord {
			return nil, p.errorf("blank inside task name %q", name.text)
		}
		return nil, p.errorf("expected \")\" after task name but found %s", p.tok)
	}
	p.next()
	p.canon.WriteString(prefix + "(" + name.text + ")")
	p.names = append(p.names, name.text)
	if op != Nr {
		p.deps = append(p.deps, name.text)
	}
	return clause{op, name.text}, nil
}
