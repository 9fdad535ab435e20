package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/store/postgres"
)

func clusterCmd(env *Env, client func() *api.Client) *cobra.Command {
	var out *outputFormat
	c := &cobra.Command{
		Use:   "cluster [-o json|yaml]",
		Short: "show the nodes of the cluster, their partitions, the load of each and the recent moves",
		Long: `cluster shows the nodes of the cluster the server directs: roles, state,
last heartbeat, partitions owned and fires recorded in the last hour, the
director and its standbys, then
the partitions that had fires in the last hour, busiest first, with their
owner, then the latest moves of partitions between nodes and why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := client().Cluster(cmd.Context())
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, st)
			}
			writeCluster(env.Stdout, st, timesOf(cmd, env))
			return nil
		},
	}
	out = addOutput(c, "the server's answer (GET /api/v1/cluster, docs/api.md)")
	drain := &cobra.Command{
		Use:   "drain NODE",
		Short: "make a node hand its partitions to the others and leave the cluster",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := client().Drain(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "node %s is draining: its partitions move at the next rebalance, then it leaves\n", termsafe.String(args[0]))
			return nil
		},
	}
	c.AddCommand(drain, grantsCmd(env))
	return c
}

// grantsCmd makes the database roles of a cluster's nodes.
func grantsCmd(env *Env) *cobra.Command {
	var db, prefix string
	var printSQL bool
	c := &cobra.Command{
		Use:   "grants --db postgres://OWNER@HOST:PORT/DB [--prefix gnomon_] [--print]",
		Short: "make the database roles of a cluster's nodes (director, clock, worker, reader) and grant each its job",
		Long: `grants applies the migrations the database lacks, then makes the group roles
PREFIXdirector, PREFIXclock, PREFIXworker and PREFIXreader (NOLOGIN) and
gives each exactly the privileges its job takes, taking back any other
(docs/security.md, "The database roles of a cluster"). Run it as the owner
of the tables (the user that first started a server on the database), and
again after each upgrade, before the nodes. Then give each node a login in
the group of its job, for example:

  CREATE ROLE w1 LOGIN PASSWORD '...' IN ROLE gnomon_worker;

--print writes the SQL instead, without a database.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if printSQL {
				sql, err := postgres.Grants(prefix)
				if err != nil {
					return usageErr("--prefix: %v", err)
				}
				_, err = io.WriteString(env.Stdout, sql)
				return err
			}
			if db == "" {
				db = env.Getenv("GNOMON_DB")
			}
			if !strings.HasPrefix(db, "postgres://") && !strings.HasPrefix(db, "postgresql://") {
				return usageErr("--db: %q is not a PostgreSQL URL (postgres://OWNER@HOST:PORT/DB): the roles are those of a cluster's database", db)
			}
			if _, err := postgres.Grants(prefix); err != nil {
				return usageErr("--prefix: %v", err)
			}
			st, err := postgres.Open(cmd.Context(), db)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.Grant(cmd.Context(), prefix); err != nil {
				return err
			}
			for _, r := range postgres.GrantRoles {
				fmt.Fprintf(env.Stdout, "role %s%s granted\n", prefix, r)
			}
			fmt.Fprintf(env.Stdout, "give each node a login in the role of its job: CREATE ROLE NAME LOGIN PASSWORD '...' IN ROLE %sworker;\n", prefix)
			return nil
		},
	}
	c.Flags().StringVar(&db, "db", "", "the cluster's database, as the owner of its tables (default $GNOMON_DB)")
	c.Flags().StringVar(&prefix, "prefix", "gnomon_", "the start of the roles' names")
	c.Flags().BoolVar(&printSQL, "print", false, "write the SQL instead of applying it")
	return c
}

// writeCluster prints a cluster's status as three tables.
func writeCluster(w io.Writer, st *cluster.Status, tf timeFormat) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "NODE\tROLES\tSTATE\tHEARTBEAT\tPARTITIONS\tFIRES/H\tVERSION\tADDRESS\n")
	for _, n := range st.Nodes {
		beat := tf.at(n.Heartbeat)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", termsafe.String(n.ID), safeList(n.Roles, ","), termsafe.String(n.State), beat,
			len(n.Partitions), st.FiresByNode[n.ID], orDash(n.Version), orDash(n.Address))
	}
	tw.Flush()
	fmt.Fprintf(w, "\ndirector %s at epoch %d", orDash(st.Director.ID), st.Director.Epoch)
	var standbys []string
	for _, n := range st.Nodes {
		if n.State == cluster.Live && n.Has(cluster.RoleDirector) && n.ID != st.Director.ID {
			standbys = append(standbys, n.ID)
		}
	}
	if len(standbys) > 0 {
		fmt.Fprintf(w, "; standby %s", safeList(standbys, ", "))
	}
	steps := fmt.Sprintf("%d with dedicated steps", st.Space.Count()-st.Space.Partitions)
	if st.Space.Scatter {
		steps = "repeaters scattered over them"
	}
	fmt.Fprintf(w, "\nspace %d minute spots in %d partitions, %s; node timeout %s\n\n",
		st.Space.Size, st.Space.Partitions, steps, time.Duration(st.Timeout))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "PARTITION\tOWNER\tEPOCH\tFIRES/H\n")
	loads := slices.Clone(st.Partitions)
	slices.SortStableFunc(loads, func(a, b cluster.Load) int { return b.Fires - a.Fires })
	for _, l := range loads {
		if l.Fires == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", termsafe.String(l.Name), orDash(l.Node), l.Epoch, l.Fires)
	}
	tw.Flush()
	if len(st.Moves) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "MOVED\tPARTITIONS\tFROM\tTO\tWHY\n")
		// One line per rebalance and pair of nodes.
		for i := 0; i < len(st.Moves); {
			m, names := st.Moves[i], []string{}
			for ; i < len(st.Moves) && st.Moves[i].At.Equal(m.At) && st.Moves[i].From == m.From && st.Moves[i].To == m.To; i++ {
				names = append(names, st.Space.PartitionName(st.Moves[i].Partition))
			}
			parts := safeList(names, ",")
			if len(names) > 3 {
				parts = fmt.Sprintf("%d (%s, ...)", len(names), safeList(names[:3], ","))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", tf.at(m.At), parts, orDash(m.From), orDash(m.To), termsafe.String(m.Reason))
		}
		tw.Flush()
	}
	writeRuns(w, &st.Runs, tf)
}

// writeRuns prints the target channel: runs queued, held by each worker,
// and those waiting for a machine no live worker serves.
func writeRuns(w io.Writer, rs *cluster.Runs, tf timeFormat) {
	held := 0
	for _, n := range rs.Held {
		held += n
	}
	fmt.Fprintf(w, "\nruns: %d queued, %d on workers", rs.Queued, held)
	for _, id := range slices.Sorted(maps.Keys(rs.Held)) {
		fmt.Fprintf(w, " (%s %d)", termsafe.String(id), rs.Held[id])
	}
	fmt.Fprintln(w)
	if len(rs.Waiting) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "WAITING\tTASK\tMACHINE\tSINCE\n")
	for _, r := range rs.Waiting {
		fmt.Fprintf(tw, "%d\t%s\t%s (no live worker serves it)\t%s\n", r.Run, termsafe.String(r.Task), termsafe.String(r.Machine), tf.at(r.Since))
	}
	tw.Flush()
}

// orDash is a stored string as a cell shows it: "-" when empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return termsafe.String(s)
}
