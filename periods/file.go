package periods

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

// File is a parsed tree file: settings shared by its trees, and the trees.
// It holds what the file says and no more: a setting the file leaves out
// stays unset here, and the defaults apply when the trees are built. Parse
// then Format gives the file back in a canonical layout, and parsing that
// gives an equal File.
//
// A File is also the plan of a tree file (Define.Plan), and its JSON
// encoding, with those of Settings, Tree and Level, is the form the
// journal keeps: it decodes to a File equal to the one encoded (nil and
// empty slices alike are left out or null, and read back nil). It is not
// the file's syntax, which Parse reads and Format writes.
type File struct {
	// Settings are the defaults of every tree of the file.
	Settings Settings `json:"settings,omitzero"`
	Trees    []Tree   `json:"trees"`
}

// Settings are the settings of a tree, or of every tree of a file. A zero
// field is unset: a tree's setting falls back to its file's, and that to
// the default.
type Settings struct {
	// StartTimeperiod is the first hour the trees are built from. It has
	// no default: the file or each tree must set it.
	StartTimeperiod Key `json:"start_timeperiod,omitzero"`
	// LagMinutes is how long after its end a discrete period is due. Nil
	// means 5.
	LagMinutes *int `json:"lag_minutes,omitempty"`
	// MaxFailures is how many failed runs a node retries; the failure
	// after them skips it. Nil means 3.
	MaxFailures *int `json:"max_failures,omitempty"`
	// Timezone is "UTC" or empty: keys are always UTC.
	Timezone string `json:"timezone,omitempty"`
}

// Tree is one tree of a file.
type Tree struct {
	Name string `json:"name"`
	// DependentOn names the trees whose counterparts gate this tree's
	// nodes (§4 of the semantics). They may be defined in other files.
	DependentOn []string `json:"dependent_on,omitempty"`
	// Settings override the file's.
	Settings Settings `json:"settings,omitzero"`
	// Levels are ordered coarsest first.
	Levels []Level `json:"levels"`
}

// Level is one level of a tree: the process that handles its periods.
//
// Its JSON encoding, for listings and the journal, is not the file's:
// Format writes files. Every is a number of nanoseconds there.
type Level struct {
	// Process names the level; it is unique among all processes and jobs.
	Process      string       `json:"process"`
	Qualifier    Qualifier    `json:"qualifier"`
	StateMachine StateMachine `json:"state_machine"`
	Blocking     Blocking     `json:"blocking"`
	// Command is a shell command that handles a period. At most one of
	// Command and Function is set; with neither, an external worker
	// handles the period and reports its outcome.
	Command string `json:"command,omitempty"`
	// Owner is the OS user ("user" or "user:group") the command runs as;
	// empty means the scheduler's default owner.
	Owner string `json:"owner,omitempty"`
	// Function names a registered Go function that handles a period.
	Function string `json:"function,omitempty"`
	// Every is the tick of a continuous level; zero means DefaultEvery.
	// Discrete levels have none.
	Every time.Duration `json:"every,omitempty"`
	// AlertOn and AlertTo configure email alerts at the end of a run:
	// on which outcomes ("success", "failure") and to whom.
	AlertOn []string `json:"alert_on,omitempty"`
	AlertTo []string `json:"alert_to,omitempty"`
}

// Defaults of the settings.
const (
	// DefaultLagMinutes is the lag when no settings give one.
	DefaultLagMinutes = 5
	// DefaultMaxFailures is the retry count when no settings give one.
	DefaultMaxFailures = 3
	// DefaultEvery is the tick of a continuous level that gives none.
	DefaultEvery = time.Minute
)

type fileJSON struct {
	Settings *settingsJSON `json:"settings,omitempty"`
	Trees    []treeJSON    `json:"trees"`
}

type settingsJSON struct {
	StartTimeperiod string `json:"startTimeperiod,omitempty"`
	LagMinutes      *int   `json:"lagMinutes,omitempty"`
	MaxFailures     *int   `json:"maxFailures,omitempty"`
	Timezone        string `json:"timezone,omitempty"`
}

type treeJSON struct {
	Name        string        `json:"name"`
	DependentOn []string      `json:"dependentOn,omitempty"`
	Settings    *settingsJSON `json:"settings,omitempty"`
	Levels      []levelJSON   `json:"levels"`
}

type levelJSON struct {
	Process      string   `json:"process"`
	Qualifier    string   `json:"qualifier"`
	StateMachine string   `json:"stateMachine,omitempty"`
	Blocking     string   `json:"blocking,omitempty"`
	Command      string   `json:"command,omitempty"`
	Owner        string   `json:"owner,omitempty"`
	Function     string   `json:"function,omitempty"`
	Every        string   `json:"every,omitempty"`
	AlertOn      []string `json:"alertOn,omitempty"`
	AlertTo      []string `json:"alertTo,omitempty"`
}

func settingsOut(s Settings) *settingsJSON {
	if s == (Settings{}) {
		return nil
	}
	o := &settingsJSON{LagMinutes: s.LagMinutes, MaxFailures: s.MaxFailures, Timezone: s.Timezone}
	if s.StartTimeperiod != 0 {
		o.StartTimeperiod = s.StartTimeperiod.String()
	}
	return o
}

// Format writes the file in the JSON shape Parse reads, indented, with
// unset settings and default values left out.
func Format(f *File) []byte {
	out := fileJSON{Settings: settingsOut(f.Settings), Trees: make([]treeJSON, len(f.Trees))}
	for i, t := range f.Trees {
		tj := treeJSON{Name: t.Name, DependentOn: t.DependentOn, Settings: settingsOut(t.Settings),
			Levels: make([]levelJSON, len(t.Levels))}
		for j, l := range t.Levels {
			lj := levelJSON{Process: l.Process, Qualifier: l.Qualifier.String(), Command: l.Command, Owner: l.Owner, Function: l.Function,
				AlertOn: l.AlertOn, AlertTo: l.AlertTo}
			if l.StateMachine != Discrete {
				lj.StateMachine = l.StateMachine.String()
			}
			if l.Blocking != Normal {
				lj.Blocking = l.Blocking.String()
			}
			if l.Every != 0 {
				lj.Every = formatEvery(l.Every)
			}
			tj.Levels[j] = lj
		}
		out.Trees[i] = tj
	}
	// Commands hold shell operators: written as they are, not escaped
	// for HTML.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic("periods: format: " + err.Error()) // only strings, ints and slices: cannot fail
	}
	return escapeUnsafe(b.Bytes())
}

// escapeUnsafe writes the characters a terminal would act on that
// encoding/json leaves as they are (DEL, C1, the bidirectional
// characters: see termsafe.Unsafe) as JSON escapes, which read back as the
// same strings: the file then prints as it is. It escapes C0 itself, so a
// newline in the text is one it wrote between lines, and outside strings
// JSON is ASCII.
func escapeUnsafe(text []byte) []byte {
	unsafe := func(r rune) bool { return r != '\n' && termsafe.Unsafe(r) }
	if !bytes.ContainsFunc(text, unsafe) {
		return text
	}
	var b bytes.Buffer
	for _, r := range string(text) {
		if unsafe(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.Bytes()
}

// formatEvery writes a tick as people do: 15m rather than 15m0s, 1h
// rather than 1h0m0s.
func formatEvery(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// IsTreeFile reports whether a definition file is a tree file: a JSON
// object with a "trees" member. Definition files of other kinds (the
// task language, data configurations) never are, so a caller can route a
// file by its shape.
func IsTreeFile(text string) bool {
	dec := json.NewDecoder(strings.NewReader(text))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return false
		}
		if key == "trees" {
			return true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return false
		}
	}
	return false
}
