package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
)

func tokenCmd(env *Env, client func() *api.Client, dataDir func() string) *cobra.Command {
	var direct bool
	var db string
	// onStore runs fn on the store of the data directory, for --direct.
	onStore := func(ctx context.Context, fn func(k auth.Keeper) error) error {
		if db == "" {
			db = env.Getenv("GNOMON_DB")
		}
		st, err := gnomon.OpenStore(ctx, db, dataDir())
		if err != nil {
			return fmt.Errorf("--direct: %w", err)
		}
		return errors.Join(fn(st), st.Close())
	}
	c := &cobra.Command{
		Use:   "token",
		Short: "create, list and revoke API tokens (admin)",
		Long: `token manages the tokens clients identify themselves with. Each token has
a role: viewer (reads everything but sensitive logs), operator (also acts
on tasks and timeperiod nodes, posts data events), admin (also defines
tasks, manages tokens and the cluster) or ingest (posts data events only).
A scope narrows what a token may change to some tasks; an admin token's
owners are the OS users the commands it defines may run as (a token with
a scope and no owners defines no commands).

The commands go through the server's API as an admin. With --direct they
work on the server's store itself (--data, or --db): for a first token, or
when no admin token is at hand; a running server sees the change within a
second. See docs/security.md.`,
	}
	c.PersistentFlags().BoolVar(&direct, "direct", false, "work on the store of the data directory (--data) or database (--db) instead of through the API")
	c.PersistentFlags().StringVar(&db, "db", "", "with --direct: the database (default $GNOMON_DB, else the data directory's SQLite file)")

	var (
		req       api.TokenRequest
		role      string
		ttl       time.Duration
		createOut *outputFormat
	)
	create := &cobra.Command{
		Use:   "create --name NAME --role ROLE [--scope PATTERN]... [--owners GLOB,...] [--expires DURATION] [--rate N]",
		Short: "create a token and print it, once",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if req.Name == "" || role == "" {
				return usageErr("--name and --role are required")
			}
			r, err := auth.ParseRole(role)
			if err != nil {
				return usageErr("--role: %v", err)
			}
			req.Role = r
			var resp *api.TokenResponse
			if direct {
				err = onStore(cmd.Context(), func(k auth.Keeper) error {
					ar := auth.Request{Name: req.Name, Role: req.Role, Scope: req.Scope, Owners: req.Owners, Rate: req.Rate, TTL: ttl}
					now := clock.Wall.Now() // tokens live in real time
					tok, t, err := auth.Create(cmd.Context(), k, ar, "gnomon token --direct", now)
					resp = &api.TokenResponse{Token: tok, TokenView: api.ViewToken(t, now)}
					return err
				})
			} else {
				resp, err = client().CreateToken(cmd.Context(), req)
			}
			if err != nil {
				return err
			}
			if createOut.structured() {
				return createOut.write(env.Stdout, resp)
			}
			fmt.Fprintln(env.Stdout, resp.Token)
			fmt.Fprintf(env.Stderr, "token %s created for %s (%s); it is shown only this once\n", resp.ID, resp.Name, resp.Role)
			return nil
		},
	}
	f := create.Flags()
	f.StringVar(&req.Name, "name", "", "the identity the token names (letters, digits, . - _ @)")
	f.StringVar(&role, "role", "", "viewer, operator, admin or ingest")
	f.StringSliceVar(&req.Scope, "scope", nil, "narrow what the token may change to tasks: NAME, PREFIX*, or group:NAME (repeatable)")
	f.StringSliceVar(&req.Owners, "owners", nil, "admin tokens: the OS users the commands the token defines may run as (task owner): USER, USER:GROUP or globs such as batch_* (comma-separated, repeatable; default: any without --scope, none with it)")
	f.StringVar(&req.Expires, "expires", "", "expire after this long, such as 720h (default: never)")
	f.IntVar(&req.Rate, "rate", 0, "requests a second the token may make (0: the server's --token-rate, -1: no limit)")
	createOut = addOutput(create, "the token and its details (POST /api/v1/tokens, docs/api.md)")
	create.PreRunE = func(*cobra.Command, []string) error {
		if req.Expires != "" {
			var err error
			if ttl, err = time.ParseDuration(req.Expires); err != nil || ttl <= 0 {
				return usageErr("--expires: %q is not a positive duration such as 720h", req.Expires)
			}
		}
		return nil
	}

	var listOut, revokeOut, whoamiOut *outputFormat
	list := &cobra.Command{
		Use:   "list",
		Short: "list the tokens, revoked and expired ones included",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var resp *api.TokensResponse
			var err error
			if direct {
				err = onStore(cmd.Context(), func(k auth.Keeper) error {
					all, err := k.Tokens(cmd.Context())
					resp = &api.TokensResponse{Tokens: []api.TokenView{}}
					for _, t := range all {
						resp.Tokens = append(resp.Tokens, api.ViewToken(t, clock.Wall.Now()))
					}
					return err
				})
			} else {
				resp, err = client().Tokens(cmd.Context())
			}
			if err != nil {
				return err
			}
			if listOut.structured() {
				return listOut.write(env.Stdout, resp)
			}
			writeTokens(env.Stdout, resp.Tokens, timesOf(cmd, env))
			return nil
		},
	}
	listOut = addOutput(list, "the tokens (GET /api/v1/tokens, docs/api.md)")

	revoke := &cobra.Command{
		Use:   "revoke ID|NAME",
		Short: "revoke a token: it is refused from now on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var v *api.TokenView
			var err error
			if direct {
				err = onStore(cmd.Context(), func(k auth.Keeper) error {
					now := clock.Wall.Now()
					t, err := auth.Revoke(cmd.Context(), k, args[0], now)
					view := api.ViewToken(t, now)
					v = &view
					return err
				})
			} else {
				v, err = client().RevokeToken(cmd.Context(), args[0])
			}
			if err != nil {
				return err
			}
			if revokeOut.structured() {
				return revokeOut.write(env.Stdout, v)
			}
			fmt.Fprintf(env.Stdout, "token %s (%s) revoked\n", v.ID, v.Name)
			return nil
		},
	}
	revokeOut = addOutput(revoke, "the token revoked (POST /api/v1/tokens/{token}/revoke, docs/api.md)")

	whoami := &cobra.Command{
		Use:   "whoami",
		Short: "say which token the command line sends, and its role",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := client().Whoami(cmd.Context())
			if err != nil {
				return err
			}
			if whoamiOut.structured() {
				return whoamiOut.write(env.Stdout, v)
			}
			fmt.Fprintf(env.Stdout, "%s (%s", v.Name, v.Role)
			if len(v.Scope) > 0 {
				fmt.Fprintf(env.Stdout, ", scope %s", strings.Join(v.Scope, " "))
			}
			fmt.Fprintf(env.Stdout, "), token %s\n", v.TokenID)
			return nil
		},
	}
	whoamiOut = addOutput(whoami, "who the token is (GET /api/v1/whoami, docs/api.md)")
	c.AddCommand(create, list, revoke, whoami)
	return c
}

func writeTokens(w io.Writer, tokens []api.TokenView, tf timeFormat) {
	if len(tokens) == 0 {
		fmt.Fprintln(w, "no tokens")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tROLE\tSCOPE\tSTATE\tCREATED\tEXPIRES\tRATE\tCREATED BY")
	for _, t := range tokens {
		scope, expires, rate := "*", "never", "default"
		if len(t.Scope) > 0 {
			scope = strings.Join(t.Scope, ",")
		}
		if len(t.Owners) > 0 {
			scope += " owners=" + strings.Join(t.Owners, ",")
		}
		if !t.Expires.IsZero() {
			expires = tf.at(t.Expires)
		}
		switch {
		case t.Rate == auth.Unlimited:
			rate = "none"
		case t.Rate > 0:
			rate = strconv.Itoa(t.Rate) + "/s"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, termsafe.String(t.Name), t.Role, termsafe.String(scope), t.State,
			tf.at(t.Created), expires, rate, termsafe.String(t.CreatedBy))
	}
	tw.Flush()
}
