package job

import (
	"slices"
	"testing"
)

func TestPlan(t *testing.T) {
	p := &Plan{
		Tasks:            []*Task{{Name: "a"}, {Name: "c"}},
		Deleted:          []string{"b"},
		Calendars:        []*Calendar{{Name: "hol"}},
		DeletedCalendars: []string{"old"},
	}
	if p.Task("a") != p.Tasks[0] || p.Task("c") != p.Tasks[1] || p.Task("b") != nil || p.Task("") != nil {
		t.Error("Task finds what the plan defines, and nothing else")
	}
	if p.Calendar("hol") != p.Calendars[0] || p.Calendar("old") != nil {
		t.Error("Calendar finds what the plan defines, and nothing else")
	}
	tasks, cals := p.Touched()
	if !slices.Equal(tasks, []string{"a", "c", "b"}) || !slices.Equal(cals, []string{"hol", "old"}) {
		t.Errorf("touched %v %v", tasks, cals)
	}
}
