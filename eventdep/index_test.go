package eventdep

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/gnomon-sched/gnomon/job"
)

func match(x *Index, t job.DataType, r string) []string {
	var out []string
	for _, ref := range x.Match(t, r, nil) {
		out = append(out, fmt.Sprintf("%s/%d", ref.Config, ref.Dep))
	}
	slices.Sort(out)
	return out
}

func TestIndexFiles(t *testing.T) {
	t.Parallel()
	var x Index
	x.Add("C1", []job.DataDep{{Type: job.File, Resource: "/scheduling_configuraiton_1/directory/path/", Life: 3600}, {Type: job.TimeBased, Resource: "cron"}})
	x.Add("ROOT", []job.DataDep{{Type: job.File, Resource: "/"}})
	x.Add("REL", []job.DataDep{{Type: job.File, Resource: "landing//in/"}})
	x.Add("T", []job.DataDep{{Type: job.Table, Resource: "BIGQUERY_TABLE_NAME_1"}, {Type: job.Table, Resource: "cron"}})
	cases := []struct {
		typ  job.DataType
		res  string
		want []string
	}{
		{job.File, "/scheduling_configuraiton_1/directory/path/file_1.txt", []string{"C1/0", "ROOT/0"}},
		{job.File, "/scheduling_configuraiton_1/directory/path/deep/er/f", []string{"C1/0", "ROOT/0"}},
		{job.File, "/scheduling_configuraiton_1/directory/path", []string{"C1/0", "ROOT/0"}},
		{job.File, "//scheduling_configuraiton_1/./directory/path//x", []string{"C1/0", "ROOT/0"}},
		{job.File, "/scheduling_configuraiton_1/directory/an_other_path/file_3.txt", []string{"ROOT/0"}},
		{job.File, "/scheduling_configuraiton_1/directory/path_old/x", []string{"ROOT/0"}},
		{job.File, "/scheduling_configuraiton_1/directory/path/../an_other_path/x", []string{"ROOT/0"}},
		{job.File, "/scheduling_configuraiton_1/directory/other/../path/x", []string{"C1/0", "ROOT/0"}},
		{job.File, "/Scheduling_configuraiton_1/directory/path/x", []string{"ROOT/0"}},
		{job.File, "scheduling_configuraiton_1/directory/path/x", nil},
		{job.File, "landing/in/part=1/f", []string{"REL/0"}},
		{job.File, "/landing/in/f", []string{"ROOT/0"}},
		{job.File, "/", []string{"ROOT/0"}},
		{job.TimeBased, "cron", []string{"C1/1"}},
		{job.TimeBased, "cron ", nil},
		{job.TimeBased, "CRON", nil},
		{job.Table, "cron", []string{"T/1"}},
		{job.Table, "BIGQUERY_TABLE_NAME_1", []string{"T/0"}},
		{job.File, "BIGQUERY_TABLE_NAME_1", nil},
	}
	for _, c := range cases {
		if got := match(&x, c.typ, c.res); !slices.Equal(got, c.want) {
			t.Errorf("%s %q matches %v, want %v", c.typ, c.res, got, c.want)
		}
	}
	x.Remove("C1", []job.DataDep{{Type: job.File, Resource: "/scheduling_configuraiton_1/directory/path/", Life: 3600}, {Type: job.TimeBased, Resource: "cron"}})
	if got := match(&x, job.TimeBased, "cron"); got != nil {
		t.Errorf("after Remove: %v", got)
	}
	if x.Len() != 4 {
		t.Errorf("Len = %d, want 4", x.Len())
	}
}

// TestIndexMatchesScan checks the index against the definition: clean both
// paths, then equal or a prefix followed by "/". Some configurations are
// removed again, whichever place they hold among those of their key.
func TestIndexMatchesScan(t *testing.T) {
	t.Parallel()
	seg := rapid.SampledFrom([]string{"a", "b", "ab", ".", "..", "", "a.b"})
	pathGen := rapid.Custom(func(t *rapid.T) string {
		p := strings.Join(rapid.SliceOfN(seg, 0, 5).Draw(t, "segs"), "/")
		if rapid.Bool().Draw(t, "abs") {
			p = "/" + p
		}
		if p == "" {
			p = "a"
		}
		return p
	})
	rapid.Check(t, func(t *rapid.T) {
		dirs := rapid.SliceOfN(pathGen, 1, 8).Draw(t, "dirs")
		var x Index
		for i, d := range dirs {
			x.Add(fmt.Sprint("C", i), []job.DataDep{{Type: job.File, Resource: d}})
		}
		removed := map[int]bool{}
		for _, i := range rapid.SliceOfNDistinct(rapid.IntRange(0, len(dirs)-1), 0, len(dirs), rapid.ID).Draw(t, "removed") {
			x.Remove(fmt.Sprint("C", i), []job.DataDep{{Type: job.File, Resource: dirs[i]}})
			removed[i] = true
		}
		if x.Len() != len(dirs)-len(removed) {
			t.Fatalf("Len = %d, want %d", x.Len(), len(dirs)-len(removed))
		}
		ev := pathGen.Draw(t, "event")
		var want []string
		ce := CleanPath(ev)
		for i, d := range dirs {
			if removed[i] {
				continue
			}
			cd := CleanPath(d)
			if ce == cd || strings.HasPrefix(ce, strings.TrimSuffix(cd, "/")+"/") {
				want = append(want, fmt.Sprintf("C%d/0", i))
			}
		}
		slices.Sort(want)
		if got := match(&x, job.File, ev); !slices.Equal(got, want) {
			t.Fatalf("event %q against %q: index %v, scan %v", ev, dirs, got, want)
		}
	})
}

// TestSeenMatchesScan checks Met and Prune against a plain list.
func TestSeenMatchesScan(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		s := NewSeen(1)
		var all []int64
		for _, ts := range rapid.SliceOfN(rapid.Int64Range(0, 50), 0, 30).Draw(t, "ts") {
			s.Add(0, ts)
			all = append(all, ts)
		}
		upto := rapid.Int64Range(-1, 50).Draw(t, "upto")
		s.Prune(0, upto)
		all = slices.DeleteFunc(all, func(ts int64) bool { return ts <= upto })
		r := rapid.Int64Range(0, 60).Draw(t, "r")
		life := rapid.Int64Range(0, 3).Draw(t, "life") // seconds: 0 or a window covering everything
		want := slices.ContainsFunc(all, func(ts int64) bool { return ts <= r && ts >= r-life*1e9 })
		if got := s.Met(0, r, life); got != want {
			t.Fatalf("Met(%d, life %d) = %v over %v, want %v", r, life, got, all, want)
		}
	})
}

func TestBefore(t *testing.T) {
	t.Parallel()
	if got := Before(-9e18, MaxLife); got != -1<<63 {
		t.Errorf("Before saturates: got %d", got)
	}
	if got := Before(10e9, 3); got != 7e9 {
		t.Errorf("Before(10s, 3) = %d", got)
	}
}
