package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCgroupOf(t *testing.T) {
	listing := "9:name=systemd:/\n4:memory:/m/1\n2:cpuacct:/gbench\n1:cpu:/gbench\n0::/user.slice/x\n"
	for _, c := range []struct {
		controller, want string
		ok               bool
	}{
		{"cpu", "/gbench", true},
		{"cpuacct", "/gbench", true},
		{"memory", "/m/1", true},
		{"", "/user.slice/x", true},
		{"pids", "", false},
	} {
		if got, ok := cgroupOf(listing, c.controller); got != c.want || ok != c.ok {
			t.Errorf("cgroupOf(%q) = %q, %v; want %q, %v", c.controller, got, ok, c.want, c.ok)
		}
	}
	// v1 controllers mounted together are listed as one line.
	if got, ok := cgroupOf("3:cpu,cpuacct:/a\n", "cpuacct"); got != "/a" || !ok {
		t.Errorf("co-mounted controllers: %q, %v", got, ok)
	}
	// A v2-only listing has no v1 controller.
	if _, ok := cgroupOf("0::/\n", "cpu"); ok {
		t.Error("a v2 listing gave a v1 cpu group")
	}
}

func TestCPUGroupStats(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("nr_periods 10\nnr_throttled 3\nthrottled_time 2500000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := (&cpuGroup{dir: dir}).throttled(); got != 2500*time.Microsecond {
		t.Errorf("v1 throttled = %s, want 2.5ms", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "cpu.stat"), []byte("usage_usec 1500\nthrottled_usec 700\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &cpuGroup{dir: dir, v2: true}
	if got := g.throttled(); got != 700*time.Microsecond {
		t.Errorf("v2 throttled = %s, want 700µs", got)
	}
	if got := g.usage(); got != 1500*time.Microsecond {
		t.Errorf("v2 usage = %s, want 1.5ms", got)
	}
}

func TestNewCPUGroupRefusesBadShares(t *testing.T) {
	for _, cs := range []cpuShare{{0, defaultCPUPeriod}, {-1, defaultCPUPeriod}, {0.05, defaultCPUPeriod}, {0.001, 100 * time.Millisecond},
		{0.5, 0}, {0.5, 2 * time.Second}} {
		if _, err := newCPUGroup("gnomon-bench-test", cs); err == nil {
			t.Errorf("share %g over %s: no error", cs.share, cs.period)
		}
	}
}

func FuzzCgroupOf(f *testing.F) {
	f.Add("1:cpu:/gbench\n0::/\n", "cpu")
	f.Add("3:cpu,cpuacct:/a\n", "cpuacct")
	f.Add("0::/x\n", "")
	f.Add(":::\n", "")
	f.Fuzz(func(t *testing.T, listing, controller string) {
		if p, ok := cgroupOf(listing, controller); !ok && p != "" {
			t.Errorf("not found, but a group %q", p)
		}
	})
}

func TestRatiosAndPerCore(t *testing.T) {
	if got := ratios(spread{200, 90}, spread{100, 30}); len(got) != 2 || got[0] != 2 || got[1] != 3 {
		t.Errorf("ratios = %v, want [2 3]", got)
	}
	if got := perCore(spread{5, 1000}); len(got) != 2 || got[0] != 200_000 || got[1] != 1000 {
		t.Errorf("perCore = %v, want [200000 1000]", got)
	}
}
