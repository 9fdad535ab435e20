package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cpuGroup is a CPU cgroup that holds the processes put in it to a share
// of a core (quota over period), as each node of a cluster would be held
// to the cores of its own machine. It is the kernel's CPU controller:
// cgroup v1 (cpu.cfs_quota_us under /sys/fs/cgroup/cpu) or v2 (cpu.max),
// which the benchmark must be allowed to write (root, or a delegated
// subtree).
type cpuGroup struct {
	dir string
	v2  bool
	// acct is v1's cpuacct group of the same name, which counts the
	// group's CPU time (v2's cpu.stat does): empty where it is missing.
	acct string
}

// cpuShare is a share of a core: quota over the controller's accounting
// period. A process that spends its quota waits for the next period, so
// the period bounds how long it stalls: with 0.2 of a core, 80 ms a
// 100 ms period, 8 ms a 10 ms one. A machine of the node's own would not
// stall it at all; the shorter period is closer to that.
type cpuShare struct {
	share  float64
	period time.Duration
}

// defaultCPUPeriod is the period the benchmarks hold nodes to their share
// over, unless -node-cpu-period says otherwise.
const defaultCPUPeriod = 10 * time.Millisecond

// cpuShareFlags defines -node-cpu and -node-cpu-period on fs, with the
// help of the first, and returns what they set.
func cpuShareFlags(fs *flag.FlagSet, help string) func() cpuShare {
	share := fs.Float64("node-cpu", 0, help)
	period := fs.Duration("node-cpu-period", defaultCPUPeriod, "the CPU controller's period over which a confined node's share is counted: a node that spends its quota stalls until the next period (the kernel's default is 100ms)")
	return func() cpuShare { return cpuShare{share: *share, period: *period} }
}

// newCPUGroup creates the group name, holding its processes to a share of
// a core. It returns an error that says why where the controller is
// missing or cannot be written.
func newCPUGroup(name string, cs cpuShare) (*cpuGroup, error) {
	share := cs.share
	if share <= 0 {
		return nil, fmt.Errorf("share %g of a core: should be positive", share)
	}
	if cs.period < time.Millisecond || cs.period > time.Second {
		return nil, fmt.Errorf("period %s: the kernel takes 1ms to 1s", cs.period)
	}
	period := cs.period.Microseconds()
	quota := int64(share * float64(period))
	if quota < 1000 {
		return nil, fmt.Errorf("share %g of a core over %s: the kernel's smallest quota is 1 ms a period, %g of a core", share, cs.period, 1000/float64(period))
	}
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		// v2: the group sits beside this process's own, which must have
		// the cpu controller enabled for its children.
		own, err := ownCgroupV2()
		if err != nil {
			return nil, err
		}
		parent := filepath.Join("/sys/fs/cgroup", own)
		if ctl, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control")); !strings.Contains(string(ctl), "cpu") {
			return nil, fmt.Errorf("cgroup v2: the cpu controller is not enabled below %s (cgroup.subtree_control)", parent)
		}
		g := &cpuGroup{dir: filepath.Join(parent, name), v2: true}
		if err := g.create(map[string]string{"cpu.max": fmt.Sprintf("%d %d", quota, period)}); err != nil {
			return nil, err
		}
		return g, nil
	}
	root := "/sys/fs/cgroup/cpu"
	if _, err := os.Stat(filepath.Join(root, "cpu.cfs_quota_us")); err != nil {
		return nil, errors.New("no CPU controller: neither cgroup v2 nor v1's /sys/fs/cgroup/cpu")
	}
	// Below this process's own group: a benchmark given a larger share
	// of a shared machine passes it on to the nodes (up to their quota).
	g := &cpuGroup{dir: filepath.Join(root, ownCgroupV1("cpu"), name)}
	if err := g.create(map[string]string{
		"cpu.cfs_period_us": strconv.FormatInt(period, 10),
		"cpu.cfs_quota_us":  strconv.FormatInt(quota, 10),
	}); err != nil {
		return nil, err
	}
	if acct := filepath.Join("/sys/fs/cgroup/cpuacct", ownCgroupV1("cpuacct"), name); os.Mkdir(acct, 0o755) == nil {
		g.acct = acct
	}
	return g, nil
}

// create makes the group's directory and writes its settings, in order
// (v1 wants the period before a quota that may exceed the old one).
func (g *cpuGroup) create(settings map[string]string) error {
	if err := os.Mkdir(g.dir, 0o755); err != nil {
		return fmt.Errorf("cgroup %s: %w", g.dir, err)
	}
	for _, file := range []string{"cpu.cfs_period_us", "cpu.cfs_quota_us", "cpu.max"} {
		v, ok := settings[file]
		if !ok {
			continue
		}
		if err := os.WriteFile(filepath.Join(g.dir, file), []byte(v), 0o644); err != nil {
			os.Remove(g.dir)
			return fmt.Errorf("cgroup %s: %s: %w", g.dir, file, err)
		}
	}
	return nil
}

// add moves process pid, with all its threads, into the group; the
// processes it starts later are born in it.
func (g *cpuGroup) add(pid int) error {
	for _, dir := range []string{g.dir, g.acct} {
		if dir == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("cgroup %s: add %d: %w", dir, pid, err)
		}
	}
	return nil
}

// usage returns the CPU time the group's processes, and those they
// started, used so far; 0 where the kernel does not count it.
func (g *cpuGroup) usage() time.Duration {
	if g.v2 {
		return time.Duration(statField(filepath.Join(g.dir, "cpu.stat"), "usage_usec")) * time.Microsecond
	}
	if g.acct == "" {
		return 0
	}
	b, _ := os.ReadFile(filepath.Join(g.acct, "cpuacct.usage"))
	n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return time.Duration(n)
}

// statField reads one field of a cgroup's cpu.stat.
func statField(path, field string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if k, v, _ := strings.Cut(strings.TrimSpace(line), " "); k == field {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// throttled returns how long the group's processes were held back by the
// quota so far.
func (g *cpuGroup) throttled() time.Duration {
	stat := filepath.Join(g.dir, "cpu.stat")
	if g.v2 {
		return time.Duration(statField(stat, "throttled_usec")) * time.Microsecond
	}
	return time.Duration(statField(stat, "throttled_time"))
}

// remove deletes the group once its processes have exited, waiting a
// little for the kernel to let them go.
func (g *cpuGroup) remove() error {
	for _, dir := range []string{g.acct, g.dir} {
		if dir == "" {
			continue
		}
		var err error
		for range 50 {
			if err = os.Remove(dir); err == nil || os.IsNotExist(err) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("cgroup %s: %w", dir, err)
		}
	}
	return nil
}

// ownCgroupV2 returns this process's cgroup v2 path, from /proc/self/cgroup.
func ownCgroupV2() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	if p, ok := cgroupOf(string(b), ""); ok {
		return p, nil
	}
	return "", errors.New("cgroup v2: this process's group is not in /proc/self/cgroup")
}

// ownCgroupV1 returns this process's group in the cgroup v1 hierarchy of
// controller, from /proc/self/cgroup ("/" when it is not listed).
func ownCgroupV1(controller string) string {
	b, _ := os.ReadFile("/proc/self/cgroup")
	if p, ok := cgroupOf(string(b), controller); ok {
		return p
	}
	return "/"
}

// cgroupOf returns the group that a /proc/PID/cgroup listing gives for a
// v1 controller ("cpu", "cpuacct") or, for "", the v2 group.
func cgroupOf(listing, controller string) (string, bool) {
	for line := range strings.Lines(listing) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		if controller == "" && f[0] == "0" && f[1] == "" || controller != "" && slices.Contains(strings.Split(f[1], ","), controller) {
			return f[2], true
		}
	}
	return "", false
}

// confinement holds each node of a benchmark to its share of a core, each
// in its own group, or says once why it cannot and leaves them free.
type confinement struct {
	cpuShare
	groups []*cpuGroup
	off    string // why nodes run unconfined; empty while they are confined
}

// newConfinement returns a confinement of each node to a share of a core;
// a share of 0 confines nothing.
func newConfinement(cs cpuShare) *confinement {
	c := &confinement{cpuShare: cs}
	if cs.share == 0 {
		c.off = "not asked"
	}
	return c
}

// confine puts process pid in a group of its own. Where the controller is
// missing, it prints why once and leaves every node unconfined.
func (c *confinement) confine(pid int) {
	if c.off != "" {
		return
	}
	g, err := newCPUGroup(fmt.Sprintf("gnomon-bench-%d-%d", os.Getpid(), len(c.groups)+1), c.cpuShare)
	if err == nil {
		if err = g.add(pid); err != nil {
			g.remove()
		}
	}
	if err != nil {
		c.off = err.Error()
		fmt.Printf("  (nodes run unconfined: %v)\n", err)
		return
	}
	c.groups = append(c.groups, g)
}

// throttled returns how long the quota held back the nodes, in all.
func (c *confinement) throttled() time.Duration {
	var d time.Duration
	for _, g := range c.groups {
		d += g.throttled()
	}
	return d
}

// usage returns the CPU time the nodes, and the processes they started,
// used so far.
func (c *confinement) usage() time.Duration {
	var d time.Duration
	for _, g := range c.groups {
		d += g.usage()
	}
	return d
}

// release removes the groups; their processes must have exited.
func (c *confinement) release() {
	for _, g := range c.groups {
		if err := g.remove(); err != nil {
			fmt.Printf("  (%v)\n", err)
		}
	}
	c.groups = nil
}

// describe says how the nodes ran, for a report's header.
func (c *confinement) describe() string {
	if c.share == 0 {
		return "nodes unconfined"
	}
	return fmt.Sprintf("each node held to %g of a core by its own CPU cgroup (quota %s a %s period)",
		c.share, time.Duration(c.share*float64(c.period)), c.period)
}
