package defs

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gnomon-sched/gnomon/job"
)

func TestWatch(t *testing.T) {
	t.Parallel()
	cur := load(t, "insert_task: x\n"+callable+"watch_file: /data/in/*.csv\nwatch_min_size: 10K\nwatch_steady: 1 minute\nwatch_interval: 5s\n"+
		"\ninsert_task: y\n"+callable+"watch_file: /data/y/[a-c]?.dat\n"+
		`
insert_task: c
type: configuration
dependencies: [{"type":"FILE","resourceId":"/data","lifeDuration":3600}]
watch_file: /data/in/*.csv
watch_min_size: 1000
`)
	want := &job.Watch{File: "/data/in/*.csv", MinSize: 10240, Steady: job.Duration(time.Minute), Interval: job.Duration(5 * time.Second)}
	if diff := cmp.Diff(want, cur["x"].Extras().Watch); diff != "" {
		t.Errorf("watch (-want +got):\n%s", diff)
	}
	if w := cur["y"].Extras().Watch; w.SteadyFor() != job.DefaultSteady || w.Every() != job.DefaultInterval || w.MinSize != 0 {
		t.Errorf("defaults: %+v", w)
	}
	var b strings.Builder
	if err := Format(&b, []*job.Task{cur["x"], cur["y"], cur["c"]}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "watch_min_size: 10K\n") || !strings.Contains(b.String(), "watch_min_size: 1000\n") {
		t.Errorf("format:\n%s", b.String())
	}
	if diff := cmp.Diff(cur, load(t, b.String())); diff != "" {
		t.Errorf("round trip through\n%s(-want +got):\n%s", b.String(), diff)
	}
	// Cleared by an update.
	again, err := run(cur, "update_task: x\nwatch_file:\nwatch_min_size:\nwatch_steady:\nwatch_interval:\n")
	if err != nil || again.Tasks["x"].Extras().Watch != nil {
		t.Errorf("cleared: %v", err)
	}
	// JSON configurations take them too.
	js := load(t, `[{"name":"J","dependencies":[{"type":"FILE","resourceId":"/in","lifeDuration":60}],"watch_file":"/in/*.csv","watch_min_size":512,"watch_steady":"2m"}]`)
	if w := js["J"].Extras().Watch; w == nil || w.File != "/in/*.csv" || w.MinSize != 512 || w.SteadyFor() != 2*time.Minute {
		t.Errorf("json configuration: %+v", w)
	}
}

func TestWatchErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ text, want string }{
		{"insert_task: y\n" + callable + "watch_file: data/in/*.csv\n", `f.def:6: insert_task y: watch_file: "data/in/*.csv" is not an absolute path`},
		{"insert_task: y\n" + callable + "watch_file: /data/in/[a-\n", `f.def:6: insert_task y: watch_file: "/data/in/[a-" is not a valid pattern`},
		{"insert_task: y\n" + callable + "watch_file: /data/in/\n", `watch_file: "/data/in/" is not a clean path (write it as /data/in`},
		{"insert_task: y\n" + callable + "watch_file: /data/x\nwatch_min_size: -5\n", `f.def:7: insert_task y: watch_min_size: "-5" is negative`},
		{"insert_task: y\n" + callable + "watch_file: /data/x\nwatch_min_size: 5 parsecs\n", `watch_min_size: "5 parsecs": unknown unit "parsecs"`},
		{"insert_task: y\n" + callable + "watch_file: /data/x\nwatch_steady: 0s\n", `watch_steady: "0s" is below 1s`},
		{"insert_task: y\n" + callable + "watch_file: /data/x\nwatch_interval: 60\n", `f.def:7: insert_task y: watch_interval: "60" has no unit; write 60s or 60m (AutoSys counts watch_interval in seconds`},
		{"insert_task: y\n" + callable + "watch_file: /data/x\nwatch_interval: 100ms\n", `watch_interval: "100ms" is below 1s`},
		{"insert_task: y\n" + callable + "watch_steady: 1m\n", "f.def:6: insert_task y: watch_min_size, watch_steady and watch_interval need watch_file"},
		{"insert_task: b\ntype: bundle\nwatch_file: /data/x\n", "watch_file: a file watcher starts a callable task or feeds a configuration, not a bundle"},
		{"insert_task: c\ntype: configuration\ndependencies: [{\"type\":\"FILE\",\"resourceId\":\"/other\",\"lifeDuration\":1}]\nwatch_file: /data/*/x.csv\n",
			`f.def:4: insert_task c: watch_file: no FILE dependency covers /data`},
	} {
		_, err := run(nil, tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: got %v, want %q", tt.text, err, tt.want)
		}
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		in   string
		want int64
	}{{"0", 0}, {"512", 512}, {"10K", 10240}, {"10kb", 10240}, {"5 MiB", 5 << 20}, {"1G", 1 << 30}, {"7B", 7}} {
		got, err := ParseSize(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if back, err := ParseSize(FormatSize(got)); err != nil || back != got {
			t.Errorf("FormatSize(%d) = %q reads back as %d, %v", got, FormatSize(got), back, err)
		}
	}
	for _, in := range []string{"", "K", "-1", "1.5K", "99999999999999999999", "9999999999999G"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): no error", in)
		}
	}
}

func FuzzSize(f *testing.F) {
	for _, s := range []string{"0", "10K", "5MB", "1 gib", "-3", "+4k", "12x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, err := ParseSize(v)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("%q read as %d", v, n)
		}
		if back, err := ParseSize(FormatSize(n)); err != nil || back != n {
			t.Fatalf("%q read as %d, written %q, read back as %d (%v)", v, n, FormatSize(n), back, err)
		}
	})
}

func TestWatchDir(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"/data/in/*.csv": "/data/in", "/data/*/x": "/data", "/a/b/c.txt": "/a/b", "/*": "/"} {
		if got := WatchDir(in); got != want {
			t.Errorf("WatchDir(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Hour: "1h", 90 * time.Minute: "1h30m", 5 * time.Minute: "5m", 90 * time.Second: "1m30s",
		time.Hour + 30*time.Second: "1h0m30s", 2 * time.Second: "2s", 1500 * time.Millisecond: "1.5s", 0: "0s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%s) = %q, want %q", d, got, want)
		}
		if back, err := parseDuration(FormatDuration(d)); err != nil || back != d {
			t.Errorf("%s does not read back: %s, %v", FormatDuration(d), back, err)
		}
	}
}
