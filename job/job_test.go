package job

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

func TestInstantJSON(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 29, 3, 30, 0, 123456789, paris) // just after the spring change
	got, err := json.Marshal(At(at))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(at.UTC())
	if string(got) != string(want) {
		t.Errorf("instant encodes as %s, want %s", got, want)
	}
	var back Instant
	if err := json.Unmarshal([]byte(`"2026-03-29T03:30:00.123456789+02:00"`), &back); err != nil {
		t.Fatal(err)
	}
	if !back.Time().Equal(at) || back.Time().Location() != time.UTC {
		t.Errorf("decoded %v, want %v in UTC", back.Time(), at)
	}
	// The zero instant is the zero time, and omitted like one.
	if !At(time.Time{}).IsZero() || !Instant(0).Time().IsZero() {
		t.Error("zero instant and zero time do not map to each other")
	}
	b, _ := json.Marshal(State{Status: Success, End: At(at)})
	if want := `{"status":"success","end":"2026-03-29T01:30:00.123456789Z"}`; string(b) != want {
		t.Errorf("state encodes as %s, want %s", b, want)
	}
}

func TestTaskJSONRoundTrip(t *testing.T) {
	for _, task := range []*Task{
		{Name: "plain", Type: Callable, Command: "true", OutLog: "/o", ErrLog: "/e", StartTimes: []Clock{60}},
		{Name: "rare", Type: Configuration, Extra: &Extra{Deps: []DataDep{{Type: Table, Resource: "t", Life: 60}},
			Function: "f", AlertOn: []Outcome{OutcomeFailure}, AlertTo: []string{"a@example.com"}, Overlap: OverlapQueue}},
	} {
		b, err := json.Marshal(task)
		if err != nil {
			t.Fatal(err)
		}
		var flat map[string]any
		if err := json.Unmarshal(b, &flat); err != nil {
			t.Fatal(err)
		}
		if _, nested := flat["Extra"]; nested {
			t.Errorf("%s: the less common attributes are nested: %s", task.Name, b)
		}
		var back Task
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(task, &back); d != "" {
			t.Errorf("%s: round trip (-want +got):\n%s", task.Name, d)
		}
	}
}

func TestCompactAndClone(t *testing.T) {
	task := &Task{Name: "a"}
	task.Edit().Label = ""
	task.Compact()
	if task.Extra != nil {
		t.Error("an Extra that sets nothing is kept")
	}
	task.Edit().AlertTo = []string{"a@example.com"}
	c := task.Clone()
	c.Edit().AlertTo[0] = "b@example.com"
	if task.Extras().AlertTo[0] != "a@example.com" {
		t.Error("a clone shares its attributes with the original")
	}
	if (&Task{}).Extras().Function != "" {
		t.Error("a task without extras reads non-zero ones")
	}
}

// TestPackStrings checks that packing keeps a configuration's strings
// equal and puts them in one allocation, and leaves other tasks alone.
func TestPackStrings(t *testing.T) {
	c := NewWithExtra(strings.Clone("C1"), Configuration)
	c.Extra.Deps = []DataDep{{Type: Table, Resource: strings.Clone("db.t"), Life: 60}, {Type: File, Resource: strings.Clone("/in/")}, {Type: TimeBased, Resource: ""}}
	want := c.Clone()
	c.PackStrings()
	if diff := cmp.Diff(want, c); diff != "" {
		t.Fatalf("packing changed the task (-want +got):\n%s", diff)
	}
	base := unsafe.StringData(c.Name)
	off := len(c.Name)
	for _, d := range c.Extra.Deps {
		if d.Resource != "" && unsafe.StringData(d.Resource) != (*byte)(unsafe.Add(unsafe.Pointer(base), off)) {
			t.Errorf("resource %q is not in the packed string", d.Resource)
		}
		off += len(d.Resource)
	}
	task := &Task{Name: strings.Clone("T"), Type: Callable, Command: "true"}
	name := unsafe.StringData(task.Name)
	task.PackStrings()
	if unsafe.StringData(task.Name) != name {
		t.Errorf("a callable task's strings were packed")
	}
}
