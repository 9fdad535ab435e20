package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/periods"
)

// The commands of the timeperiod trees (seed 003, docs/timeperiods.md):
// gnomon tree lists and shows trees, gnomon node shows nodes and acts on
// them. Keys are UTC; only the period starts tree show prints convert.

func treeCmd(env *Env, client func() *api.Client) *cobra.Command {
	c := &cobra.Command{
		Use:   "tree",
		Short: "list timeperiod trees, or show a tree's nodes as a grid of periods by levels",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var out *outputFormat
	list := &cobra.Command{
		Use:   "list [-o json|yaml]",
		Short: "list the trees: levels, dependencies, and the nodes of each level by state",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			resp, err := client().Trees(cmd.Context())
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, resp)
			}
			writeTrees(env.Stdout, resp.Trees)
			return nil
		},
	}
	out = addOutput(list, "the server's answer (GET /api/v1/trees, docs/api.md)")
	c.AddCommand(list, treeShowCmd(env, client))
	return c
}

func treeShowCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		level, from, to, zone string
		out                   *outputFormat
	)
	c := &cobra.Command{
		Use:   "show TREE [--level Q] [--from K --to K] [--tz ZONE] [-o json|yaml]",
		Short: "show a tree's nodes: one row per period, one column per level",
		Long: `show prints a grid of a tree's nodes: one row per period of its bottom level
(or of --level), oldest first, and one column per level, coarsest first.
Each cell is the state of the node that holds the row's period (embryo is
shown as queued), with its failed runs in parentheses when it has some, and
a * while a run is outstanding (requested or running).

K is a timeperiod key, YYYYMMDDHH in UTC; a finer key is read as the period
that holds it. Without --from and --to, the rows are the last 24 periods up
to the current one; with one of them, 24 periods from --from or up to --to.
--tz converts the period starts shown, never the keys (default UTC).`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeTrees(client),
		RunE: func(cmd *cobra.Command, args []string) error {
			loc := time.UTC
			if zone != "" {
				l, err := time.LoadLocation(zone)
				if err != nil || zone == "Local" {
					return usageErr("--tz: unknown time zone %q (want an IANA name such as Europe/Paris)", zone)
				}
				loc = l
			}
			g, err := readGrid(cmd.Context(), client(), args[0], level, from, to)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, g.view())
			}
			writeGrid(env.Stdout, g, loc)
			return nil
		},
	}
	c.Flags().StringVar(&level, "level", "", "only this level: a qualifier (hourly, daily, monthly, yearly) or a process")
	c.Flags().StringVar(&from, "from", "", "first period, a key YYYYMMDDHH (UTC)")
	c.Flags().StringVar(&to, "to", "", "last period, a key YYYYMMDDHH (UTC)")
	c.Flags().StringVar(&zone, "tz", "", "time zone of the period starts shown (default UTC; keys stay UTC)")
	out = addOutput(c, `{"tree", "rows", "levels": [{"process", "qualifier", "nodes": [node]}]}: the grid's periods and the nodes of each level in them, as GET /api/v1/nodes answers them`)
	return c
}

// grid is a tree's nodes as tree show prints them: the rows' qualifier and
// keys, the levels, and the nodes of each level by key.
type grid struct {
	tree   string
	rowQ   periods.Qualifier
	rows   []periods.Key
	levels []periods.LevelInfo
	nodes  []map[periods.Key]api.NodeView
}

// gridView is a grid as tree show -o json prints it.
type gridView struct {
	Tree   string          `json:"tree"`
	Rows   []periods.Key   `json:"rows"`
	Levels []gridLevelView `json:"levels"`
}

// gridLevelView is a level of a grid and its nodes in the rows, in key
// order.
type gridLevelView struct {
	Process   string            `json:"process"`
	Qualifier periods.Qualifier `json:"qualifier"`
	Nodes     []api.NodeView    `json:"nodes"`
}

// view is g as tree show -o json prints it.
func (g *grid) view() gridView {
	v := gridView{Tree: g.tree, Rows: g.rows, Levels: []gridLevelView{}}
	if v.Rows == nil {
		v.Rows = []periods.Key{}
	}
	for i, l := range g.levels {
		lv := gridLevelView{Process: l.Process, Qualifier: l.Qualifier, Nodes: []api.NodeView{}}
		if i < len(g.nodes) {
			for _, k := range slices.Sorted(maps.Keys(g.nodes[i])) {
				lv.Nodes = append(lv.Nodes, g.nodes[i][k])
			}
		}
		v.Levels = append(v.Levels, lv)
	}
	return v
}

// maxGridRows bounds the rows of one grid.
const maxGridRows = 10_000

// readGrid reads the nodes of a tree for the rows asked for.
func readGrid(ctx context.Context, c *api.Client, name, level, from, to string) (*grid, error) {
	t, err := c.Tree(ctx, name)
	if err != nil {
		return nil, err
	}
	g := &grid{tree: t.Name, levels: t.Levels}
	if level != "" {
		i := -1
		for j, l := range t.Levels {
			if l.Qualifier.String() == level || l.Process == level {
				i = j
			}
		}
		if i < 0 {
			var names []string
			for _, l := range t.Levels {
				names = append(names, l.Qualifier.String()+" ("+l.Process+")")
			}
			return nil, usageErr("--level: tree %s has no level %q (its levels: %s)", t.Name, level, strings.Join(names, ", "))
		}
		g.levels = t.Levels[i : i+1]
	}
	if len(g.levels) == 0 {
		return g, nil
	}
	g.rowQ = g.levels[len(g.levels)-1].Qualifier
	key := func(flag, v string) (periods.Key, error) {
		if v == "" {
			return 0, nil
		}
		k, err := periods.ParseKey(v)
		if err == nil {
			k, err = g.rowQ.Cast(k)
		}
		if err != nil {
			return 0, usageErr("%s: %v", flag, err)
		}
		return k, nil
	}
	lo, err := key("--from", from)
	if err != nil {
		return nil, err
	}
	hi, err := key("--to", to)
	if err != nil {
		return nil, err
	}
	clock, err := c.Clock(ctx)
	if err != nil {
		return nil, err
	}
	now := g.rowQ.KeyAt(clock.Now)
	switch {
	case lo == 0 && hi == 0:
		hi, lo = now, g.rowQ.Add(now, -23)
	case lo == 0:
		lo = g.rowQ.Add(hi, -23)
	case hi == 0:
		hi = g.rowQ.Add(lo, 23)
	}
	if hi < lo {
		return nil, usageErr("--to %s is before --from %s", hi, lo)
	}
	// Nodes exist from the tree's start to the current period.
	lo, hi = max(lo, startOf(g.rowQ, t.Start)), min(hi, now)
	if hi < lo {
		return g, nil
	}
	if n := g.rowQ.Sub(hi, lo) + 1; n > maxGridRows {
		return nil, usageErr("%d periods from %s to %s: narrow --from and --to to %d at most", n, lo, hi, maxGridRows)
	}
	for k := lo; k <= hi; k = g.rowQ.Next(k) {
		g.rows = append(g.rows, k)
	}
	for _, l := range g.levels {
		resp, err := c.Nodes(ctx, api.NodesQuery{Process: l.Process, From: lo.String(), To: hi.String()})
		if err != nil {
			return nil, err
		}
		m := map[periods.Key]api.NodeView{}
		for _, n := range resp.Nodes {
			m[n.Timeperiod] = n
		}
		g.nodes = append(g.nodes, m)
	}
	return g, nil
}

// startOf returns the period of q that holds a tree's start (an hourly
// key).
func startOf(q periods.Qualifier, start periods.Key) periods.Key {
	k, err := q.Cast(start)
	if err != nil {
		return start
	}
	return k
}

func nodeCmd(env *Env, client func() *api.Client) *cobra.Command {
	c := &cobra.Command{
		Use:   "node",
		Short: "show, list, skip and reprocess timeperiod nodes; report their runs' outcomes",
		Long: `node shows the nodes of timeperiod trees, one period of one process each,
and acts on them. TIMEPERIOD is a key YYYYMMDDHH in UTC; a key of a finer
level names the period that holds it (node show site_daily 2026112414 shows
the day 2026112400).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(nodeShowCmd(env, client), nodeListCmd(env, client), nodeSkipCmd(env, client), nodeReprocessCmd(env, client),
		nodeCompleteCmd(env, client), nodeStartCmd(env, client))
	return c
}

func nodeShowCmd(env *Env, client func() *api.Client) *cobra.Command {
	var out *outputFormat
	c := &cobra.Command{
		Use:   "show PROCESS TIMEPERIOD [-o json|yaml]",
		Short: "show a node: its period, state, run, parent, children, counterparts, dependants and event log",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := client().Node(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, d)
			}
			writeNode(env.Stdout, d, timesOf(cmd, env))
			return nil
		},
		ValidArgsFunction: completeProcesses(client),
	}
	out = addOutput(c, "the server's answer (GET /api/v1/nodes/{process}/{timeperiod}, docs/api.md)")
	return c
}

func nodeListCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		q   api.NodesQuery
		out *outputFormat
	)
	c := &cobra.Command{
		Use:   "list -p PROCESS [--outstanding] [--from K --to K] [-o json|yaml] | --outstanding",
		Short: "list the nodes of a process, or those with a run requested or running (--outstanding)",
		Long: `list prints the nodes of a process in key order (--from and --to bound the
keys, inclusive), with --outstanding only those with a run requested or
running; --outstanding without -p lists those of every tree.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if q.Process == "" && !q.Outstanding {
				return usageErr("-p PROCESS or --outstanding is required")
			}
			if q.Process == "" && (q.From != "" || q.To != "") {
				return usageErr("--from and --to bound the nodes of a process: give -p PROCESS")
			}
			resp, err := client().Nodes(cmd.Context(), q)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, resp)
			}
			none := "no nodes"
			if q.Outstanding {
				none = "no node has a run outstanding"
			}
			writeNodes(env.Stdout, resp.Nodes, none)
			return nil
		},
	}
	c.Flags().StringVarP(&q.Process, "process", "p", "", "the process whose nodes to list")
	c.Flags().BoolVar(&q.Outstanding, "outstanding", false, "only the nodes with a run requested or running")
	c.Flags().StringVar(&q.From, "from", "", "first key, YYYYMMDDHH (UTC)")
	c.Flags().StringVar(&q.To, "to", "", "last key, YYYYMMDDHH (UTC)")
	out = addOutput(c, "the server's answer (GET /api/v1/nodes, docs/api.md)")
	c.RegisterFlagCompletionFunc("process", completeProcesses(client))
	return c
}

func nodeSkipCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		dry bool
		out *outputFormat
	)
	c := &cobra.Command{
		Use:   "skip PROCESS TIMEPERIOD... [--dry-run]",
		Short: "skip periods of a process, with the cascade to their children and dependants",
		Long: `skip gives up periods of a process: each active node is skipped and its run
canceled, and the skip goes on to its children and its dependants; a
finished node stays as it is but the skip still goes on from it. It prints
each node that changed (with --dry-run: would change; then nothing does).`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := client().SkipNodes(cmd.Context(), args[0], args[1:], dry)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, resp)
			}
			writeNodeChanges(env.Stdout, resp.Changed, dry)
			return nil
		},
		ValidArgsFunction: completeProcesses(client),
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "list what the skip would change, and change nothing")
	out = addOutput(c, "the nodes that changed (POST /api/v1/nodes/{process}/{timeperiod}/skip, docs/api.md)")
	return c
}

func nodeReprocessCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		dry bool
		out *outputFormat
	)
	c := &cobra.Command{
		Use:   "reprocess PROCESS TIMEPERIOD [--dry-run]",
		Short: "run a period of a process again, with its parents and dependants",
		Long: `reprocess sets a node back to queued, with no failures and its run canceled,
then its parent up to the top of the tree, then its dependants with their
parents; the rules then run them again. It prints each node that changed
(with --dry-run: that the cascade would change; then nothing does).`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			resp, err := client().ReprocessNode(cmd.Context(), args[0], args[1], dry)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, resp)
			}
			writeNodeChanges(env.Stdout, resp.Changed, dry)
			return nil
		},
		ValidArgsFunction: completeProcesses(client),
	}
	c.Flags().BoolVar(&dry, "dry-run", false, "list what the reprocess would change, and change nothing")
	out = addOutput(c, "the nodes that changed (POST /api/v1/nodes/{process}/{timeperiod}/reprocess, docs/api.md)")
	return c
}

// outcomes are those a run's outcome may be.
var outcomes = []string{string(periods.OutcomeProcessed), string(periods.OutcomeNoop), string(periods.OutcomeFailed), string(periods.OutcomeCanceled)}

func nodeCompleteCmd(env *Env, client func() *api.Client) *cobra.Command {
	var outcome, message string
	var (
		runID int64
		out   *outputFormat
	)
	c := &cobra.Command{
		Use:   "complete PROCESS TIMEPERIOD --outcome processed|noop|failed|canceled [--message M] [--run ID]",
		Short: "report the outcome of a node's outstanding run, as an external worker does",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(outcomes, outcome) {
				return usageErr("--outcome must be processed, noop, failed or canceled, got %q", outcome)
			}
			before, err := client().Node(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if runID == 0 && before.Run != nil {
				runID = before.Run.ID // the run read is the run ended, or none
			}
			d, err := client().CompleteNode(cmd.Context(), args[0], args[1], api.CompleteRequest{Outcome: periods.Outcome(outcome), Message: message, Run: runID})
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, d)
			}
			run := "its run"
			if runID != 0 {
				run = fmt.Sprintf("run %d", runID)
			}
			fmt.Fprintf(env.Stdout, "%s %s: %s %s; the node is %s%s\n", termsafe.String(d.Process), d.Timeperiod, run, outcome, stateName(d.State), runNote(d))
			return nil
		},
		ValidArgsFunction: completeProcesses(client),
	}
	c.Flags().StringVar(&outcome, "outcome", "", "processed, noop, failed (retried) or canceled (the node is skipped)")
	c.Flags().StringVar(&message, "message", "", "what the worker has to say, kept in the node's event log")
	c.Flags().Int64Var(&runID, "run", 0, "the run the outcome is of (default: the node's outstanding run when read); another is refused")
	out = addOutput(c, "the node once its outcome is durable (POST /api/v1/nodes/{process}/{timeperiod}/complete, docs/api.md)")
	c.RegisterFlagCompletionFunc("outcome", cobra.FixedCompletions(outcomes, cobra.ShellCompDirectiveNoFileComp))
	return c
}

func nodeStartCmd(env *Env, client func() *api.Client) *cobra.Command {
	var out *outputFormat
	c := &cobra.Command{
		Use:   "start PROCESS TIMEPERIOD",
		Short: "say that a node's outstanding run started, as an external worker does (optional)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			d, err := client().StartNode(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, d)
			}
			fmt.Fprintf(env.Stdout, "%s %s: %s%s\n", termsafe.String(d.Process), d.Timeperiod, stateName(d.State), runNote(d))
			return nil
		},
		ValidArgsFunction: completeProcesses(client),
	}
	out = addOutput(c, "the node (POST /api/v1/nodes/{process}/{timeperiod}/start, docs/api.md)")
	return c
}

// runNote tells a node's outstanding run, after its state.
func runNote(d *api.NodeDetailView) string {
	switch {
	case d.Run != nil:
		return fmt.Sprintf(", run %d %s", d.Run.ID, termsafe.String(string(d.Run.State)))
	case d.Awaiting:
		return ", awaiting its final run"
	}
	return ""
}

// treeTick ticks the continuous levels of a simulating server, and says so
// plainly on a real clock.
func treeTick(ctx context.Context, c *api.Client, req api.ClockRequest) (*api.ClockResponse, error) {
	r, err := c.MoveClock(ctx, req)
	var ae *api.Error
	if errors.As(err, &ae) && ae.Status == http.StatusConflict && strings.Contains(ae.Message, "virtual clock") {
		return nil, errors.New("the clock can only be moved or ticked on a server started with --simulate-from")
	}
	return r, err
}
