package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/job"
)

// TestYAMLOfARun prints an answer of the API as YAML: the JSON fields in
// their order, strings quoted only when YAML would read them otherwise.
func TestYAMLOfARun(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 28, 1, 36, 2, 0, time.UTC)
	v := []api.RunView{{Run: job.Run{ID: 7, Task: "nightly", Status: job.Failure, Start: at, End: at.Add(time.Second), ExitCode: 3,
		Message: "disk full: /var", Data: map[string]string{"no": "yes", "rows": "12"}},
		Children: []job.Run{{ID: 8, Task: "n1", Status: job.Success, Start: at}}}}
	var b bytes.Buffer
	if err := writeYAML(&b, v); err != nil {
		t.Fatal(err)
	}
	want := `- id: 7
  task: nightly
  status: failure
  start: "2026-11-28T01:36:02Z"
  end: "2026-11-28T01:36:03Z"
  exit_code: 3
  message: "disk full: /var"
  data:
    "no": "yes"
    rows: "12"
  children:
  - id: 8
    task: n1
    status: success
    start: "2026-11-28T01:36:02Z"
    exit_code: 0
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	empty := map[string]any{"list": []int{}, "map": map[string]int{}, "nested": [][]string{{"a", "b"}, {}}}
	b.Reset()
	if err := writeYAML(&b, empty); err != nil {
		t.Fatal(err)
	}
	if want := "list: []\nmap: {}\nnested:\n- - a\n  - b\n- []\n"; b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// FuzzYAML reads any JSON value back from the YAML writeYAML prints of it,
// with a reader of the block YAML it writes: the same value.
func FuzzYAML(f *testing.F) {
	for _, s := range []string{
		`{"a": 1, "b": [true, false, null], "c": {"d": "e: f", "": "", "- x": "#y"}}`,
		`[[], {}, [[1, 2], {"k": [3]}], "yes", "No", "null", "~", "12", "1e3", " lead", "trail ", "a\nb\t\u0000"]`,
		`"plain"`, `3.25`, `{"nested": {"deeper": {"list": [{"x": 1}, {"y": [2]}]}}}`,
		`{"'quote'": "\"dq\"", "é": "ü", "key:colon": "a - b", "-": "-", "?": "?"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		d := json.NewDecoder(bytes.NewReader(data))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			return
		}
		var b bytes.Buffer
		if err := writeYAML(&b, v); err != nil {
			t.Fatalf("writeYAML(%s): %v", data, err)
		}
		got, err := readYAML(b.String())
		if err != nil {
			t.Fatalf("%v, reading\n%s", err, b.String())
		}
		if !reflect.DeepEqual(got, v) {
			t.Fatalf("read back %#v, want %#v, from\n%s", got, v, b.String())
		}
	})
}

// yamlLine is a line of YAML: its indentation and what follows it.
type yamlLine struct {
	indent int
	text   string
}

// readYAML reads the block YAML writeYAML writes (and no other) into the
// values encoding/json decodes with UseNumber.
func readYAML(text string) (any, error) {
	var lines []yamlLine
	for l := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
		trimmed := strings.TrimLeft(l, " ")
		lines = append(lines, yamlLine{len(l) - len(trimmed), trimmed})
	}
	r := &yamlReader{lines: lines}
	v, err := r.block(0)
	if err == nil && r.i != len(lines) {
		err = &yamlErr{r.i, "left over"}
	}
	return v, err
}

type yamlErr struct {
	line int
	msg  string
}

func (e *yamlErr) Error() string { return fmt.Sprintf("line %d: %s", e.line+1, e.msg) }

type yamlReader struct {
	lines []yamlLine
	i     int
}

// yamlKey matches the key of a mapping's line: plain, or double-quoted.
var yamlKey = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_./-]*|"(?:[^"\\]|\\.)*"):(?: |$)`)

// block reads the value whose first line is the current one, at indent.
func (r *yamlReader) block(indent int) (any, error) {
	if r.i >= len(r.lines) || r.lines[r.i].indent != indent {
		return nil, &yamlErr{r.i, "want a value"}
	}
	l := r.lines[r.i]
	switch {
	case strings.HasPrefix(l.text, "- "):
		out := []any{}
		for r.i < len(r.lines) && r.lines[r.i].indent == indent && strings.HasPrefix(r.lines[r.i].text, "- ") {
			// The item as a line of its own, two columns in.
			r.lines[r.i] = yamlLine{indent + 2, r.lines[r.i].text[2:]}
			v, err := r.block(indent + 2)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yamlKey.MatchString(l.text):
		out := map[string]any{}
		for r.i < len(r.lines) && r.lines[r.i].indent == indent && yamlKey.MatchString(r.lines[r.i].text) {
			text := r.lines[r.i].text
			m := yamlKey.FindStringSubmatch(text)
			key, err := yamlScalar(m[1])
			if err != nil {
				return nil, err
			}
			k, ok := key.(string)
			if !ok {
				return nil, &yamlErr{r.i, "a key that is not a string"}
			}
			rest := strings.TrimPrefix(text[len(m[1]):], ":")
			if rest != "" {
				v, err := yamlScalar(strings.TrimPrefix(rest, " "))
				if err != nil {
					return nil, err
				}
				out[k] = v
				r.i++
				continue
			}
			r.i++
			if r.i >= len(r.lines) {
				return nil, &yamlErr{r.i, "a key without value"}
			}
			next := r.lines[r.i]
			var v any
			switch {
			case next.indent > indent:
				v, err = r.block(next.indent)
			case next.indent == indent && strings.HasPrefix(next.text, "- "):
				v, err = r.block(indent)
			default:
				err = &yamlErr{r.i, "a key without value"}
			}
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	}
	r.i++
	return yamlScalar(l.text)
}

// yamlScalar reads a scalar writeYAML writes.
func yamlScalar(s string) (any, error) {
	switch s {
	case "null":
		return nil, nil
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "{}":
		return map[string]any{}, nil
	case "[]":
		return []any{}, nil
	}
	if strings.HasPrefix(s, `"`) {
		var v string
		err := json.Unmarshal([]byte(s), &v)
		return v, err
	}
	var n json.Number
	if json.Unmarshal([]byte(s), &n) == nil {
		return n, nil
	}
	if !plainYAML.MatchString(s) || yamlWords[strings.ToLower(s)] {
		return nil, &yamlErr{0, "not a scalar writeYAML writes: " + s}
	}
	return s, nil
}
