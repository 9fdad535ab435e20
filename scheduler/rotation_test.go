package scheduler

import (
	"testing"

	"github.com/gnomon-sched/gnomon/job"
)

// A run's log rotation takes each setting from the task, else from the
// first of its groups that sets it.
func TestRotationOf(t *testing.T) {
	t.Parallel()
	groups := map[string]*job.LogRotation{
		"a": {Size: 10, Keep: 3},
		"b": {Size: 20, Age: 7, Keep: 5},
	}
	of := func(g string) *job.LogRotation { return groups[g] }
	for _, c := range []struct {
		own    *job.LogRotation
		groups []string
		want   *job.LogRotation
	}{
		{nil, nil, nil},
		{nil, []string{"none"}, nil},
		{nil, []string{"a", "b"}, &job.LogRotation{Size: 10, Age: 7, Keep: 3}},
		{&job.LogRotation{Size: job.Off}, []string{"b"}, &job.LogRotation{Size: job.Off, Age: 7, Keep: 5}},
		{&job.LogRotation{Keep: 9}, nil, &job.LogRotation{Keep: 9}},
	} {
		got := rotationOf(c.own, c.groups, of)
		if (got == nil) != (c.want == nil) || got != nil && *got != *c.want {
			t.Errorf("rotationOf(%+v, %v) = %+v, want %+v", c.own, c.groups, got, c.want)
		}
	}
}
