package postgres

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// The roles of a cluster's database (docs/security.md, "The database
// roles of a cluster"): one group role for each kind of node and one for
// reports, each allowed what its job takes and nothing else. A login
// role for each node joins the group of its job; the tables stay owned
// by whoever applied the migrations, which no node's role can change.
const (
	RoleDirector = "director" // the engine: every row of every table
	RoleClock    = "clock"    // records the fires of its partitions
	RoleWorker   = "worker"   // claims, starts and ends queued runs
	RoleReader   = "reader"   // reads everything but the tokens
)

// GrantRoles are the group roles Grants makes, in the order it makes them.
var GrantRoles = []string{RoleDirector, RoleClock, RoleWorker, RoleReader}

// tableGrants says, for every table the migrations make, what each role
// but the director (which reads and writes every table) may do with it.
// A table missing here is refused by Grants: a new table must be given
// its place (the test of the roles compares this list with the database).
var tableGrants = map[string]map[string]string{
	// The engine's state and history: the director's alone to write.
	// The clock reads the time triggers and the version of the
	// definitions, a worker the file watchers of its machines.
	"journal":          {RoleClock: "SELECT", RoleWorker: "SELECT", RoleReader: "SELECT"},
	"tasks":            {RoleClock: "SELECT", RoleWorker: "SELECT", RoleReader: "SELECT"},
	"calendars":        {RoleClock: "SELECT", RoleReader: "SELECT"},
	"cursors":          {RoleClock: "SELECT", RoleWorker: "SELECT", RoleReader: "SELECT"}, // a simulated clock's reading
	"runs":             {RoleReader: "SELECT"},
	"fires":            {RoleReader: "SELECT"},
	"checkpoint":       {RoleReader: "SELECT"},
	"checkpoint_parts": {RoleReader: "SELECT"},
	"alerts":           {RoleReader: "SELECT"},
	"alert_attempts":   {RoleReader: "SELECT"},
	"audit":            {RoleReader: "SELECT"},
	"tree_files":       {RoleReader: "SELECT"},
	"tree_nodes":       {RoleReader: "SELECT"},
	"tree_log":         {RoleReader: "SELECT"},
	"tree_state":       {RoleReader: "SELECT"},
	"last_commit":      {RoleReader: "SELECT"},
	// The hashes of the API tokens: the director's alone.
	"tokens": {},
	// What every node reads at start: the applied migrations.
	"goose_db_version": {RoleClock: "SELECT", RoleWorker: "SELECT", RoleReader: "SELECT"},
	// The cluster's coordination: every node registers, beats and
	// leaves (freeing its partitions, which is recorded as a move).
	"cluster_settings": {RoleClock: "SELECT", RoleWorker: "SELECT", RoleReader: "SELECT"},
	"cluster_nodes":    {RoleClock: "SELECT, INSERT, UPDATE", RoleWorker: "SELECT, INSERT, UPDATE", RoleReader: "SELECT"},
	"cluster_leases":   {RoleClock: "SELECT, INSERT, UPDATE", RoleWorker: "SELECT, INSERT, UPDATE", RoleReader: "SELECT"},
	"cluster_moves":    {RoleClock: "INSERT", RoleWorker: "INSERT", RoleReader: "SELECT"},
	// The clock's records of the fires of its partitions.
	"cluster_fires":  {RoleClock: "SELECT, INSERT", RoleReader: "SELECT"},
	"cluster_claims": {RoleClock: "SELECT, INSERT", RoleReader: "SELECT"},
	// The queue of runs: the director queues, a worker claims and ends.
	"cluster_runs": {RoleWorker: "SELECT, UPDATE", RoleReader: "SELECT"},
	// The file versions a worker's watchers found, for the director to
	// take, and what each worker's watchers handed over.
	"cluster_files":        {RoleWorker: "SELECT, INSERT", RoleReader: "SELECT"}, // INSERT ... ON CONFLICT reads the key
	"cluster_watch_memory": {RoleWorker: "SELECT, INSERT, UPDATE, DELETE", RoleReader: "SELECT"},
}

// sequenceGrants are the sequences of the tables with one, and the
// roles besides the director that insert into those tables.
var sequenceGrants = map[string][]string{
	"alert_attempts_id_seq":   nil,
	"checkpoint_parts_id_seq": nil,
	"cluster_files_id_seq":    {RoleWorker},
	"cluster_fires_id_seq":    {RoleClock},
	"cluster_moves_id_seq":    {RoleClock, RoleWorker},
}

var prefixPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,40}$`)

// Grants returns the SQL that makes the group roles PREFIX + each of
// GrantRoles (NOLOGIN, when missing) and gives each exactly its
// privileges on the tables of the current schema, taking back any other:
// it may be run again, after each upgrade, by the owner of the tables.
func Grants(prefix string) (string, error) {
	if !prefixPattern.MatchString(prefix) {
		return "", fmt.Errorf("prefix %q: want lower-case letters, digits and _ (at most 41), such as gnomon_", prefix)
	}
	var b strings.Builder
	tables := sortedKeys(tableGrants)
	all := strings.Join(tables, ", ")
	for _, r := range GrantRoles {
		role := prefix + r
		fmt.Fprintf(&b, "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '%s') THEN CREATE ROLE %s NOLOGIN; END IF; END $$;\n", role, role)
		fmt.Fprintf(&b, "REVOKE ALL ON TABLE %s FROM %s;\n", all, role)
		fmt.Fprintf(&b, "REVOKE ALL ON SEQUENCE %s FROM %s;\n", strings.Join(sortedKeys(sequenceGrants), ", "), role)
	}
	fmt.Fprintf(&b, "GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE %s TO %s;\n", all, prefix+RoleDirector)
	fmt.Fprintf(&b, "GRANT USAGE, SELECT, UPDATE ON SEQUENCE %s TO %s;\n", strings.Join(sortedKeys(sequenceGrants), ", "), prefix+RoleDirector)
	for _, t := range tables {
		for _, r := range GrantRoles[1:] {
			if p := tableGrants[t][r]; p != "" {
				fmt.Fprintf(&b, "GRANT %s ON TABLE %s TO %s;\n", p, t, prefix+r)
			}
		}
	}
	for _, sq := range sortedKeys(sequenceGrants) {
		for _, r := range sequenceGrants[sq] {
			fmt.Fprintf(&b, "GRANT USAGE ON SEQUENCE %s TO %s;\n", sq, prefix+r)
		}
	}
	return b.String(), nil
}

// Grant applies Grants(prefix) in one transaction, after checking that
// every table of the database has its place in it. The store's user must
// own the tables (it applied the migrations) and may create roles.
func (s *Store) Grant(ctx context.Context, prefix string) error {
	sql, err := Grants(prefix)
	if err != nil {
		return err
	}
	tables, err := s.Tables(ctx)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if _, ok := tableGrants[t]; !ok {
			return fmt.Errorf("grant: table %s has no place among the roles' grants: this version of gnomon does not know it", t)
		}
	}
	return pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sql); err != nil {
			return fmt.Errorf("grant: %w", err)
		}
		return nil
	})
}

// Tables names the tables of the store's schema, sorted.
func (s *Store) Tables(ctx context.Context) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`)
	if err != nil {
		return nil, fmt.Errorf("tables: %w", err)
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
