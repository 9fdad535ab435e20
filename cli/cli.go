// Package cli is gnomon's command line: the gnomon command with its
// subcommands, and the seed names schd_def, schd_event, schd_task,
// schd_status and schd_runs when the binary is called through a link of
// that name.
package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/internal/suggest"
	"github.com/gnomon-sched/gnomon/internal/termsafe"
	"github.com/gnomon-sched/gnomon/job"
)

// Exit codes.
const (
	ExitOK          = 0
	ExitRejected    = 1 // rejected definition, refused event, unknown task
	ExitUsage       = 2
	ExitUnreachable = 3
)

// Env carries what a command reads from and writes to, so tests can run the
// whole command line in-process.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// IsTerminal reports whether a writer is a terminal, where long
	// commands show their progress (default: a character device).
	IsTerminal func(io.Writer) bool
	// Clock is the clock of what a command dates itself: the default
	// timestamp of an event, the start of an offline forecast or
	// calendar (default: clock.System). Credentials (tokens,
	// certificates) and elapsed times read clock.Wall.
	Clock clock.Clock
}

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErr(format string, args ...any) error {
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, args...)}
}

// Run runs the command line and returns the exit code. args[0] is the
// program name: a link named schd_def (and so on) runs that command.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	root, st := newRoot(&env)
	name := filepath.Base(args[0])
	rest := args[1:]
	if sub, ok := seedNames[name]; ok {
		root.Annotations = map[string]string{seedName: name}
		if len(rest) > 0 && (rest[0] == cobra.ShellCompRequestCmd || rest[0] == cobra.ShellCompNoDescRequestCmd) {
			// A completion script asks "schd_def __complete ARGS".
			rest = append([]string{rest[0], sub}, rest[1:]...)
		} else {
			rest = append([]string{sub}, rest...)
		}
	}
	root.SetArgs(rest)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	root.SilenceErrors, root.SilenceUsage = true, true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return flagError(c, err) })
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	code, lines := st.explain(ctx, cmd, err)
	for _, l := range lines {
		fmt.Fprintln(env.Stderr, errorLine(l))
	}
	return code
}

// seedNames maps the seed's command names to subcommands.
var seedNames = map[string]string{
	"schd_def": "def", "schd_event": "event", "schd_task": "task", "schd_status": "status", "schd_runs": "runs",
}

// classify maps an error to an exit code and the lines to print, in one
// place.
func classify(err error) (int, []string) {
	var (
		ee *exitError
		ae *api.Error
	)
	switch {
	case errors.As(err, &ee):
		return ee.code, []string{ee.msg}
	case errors.Is(err, api.ErrUnreachable):
		return ExitUnreachable, []string{err.Error()}
	case errors.As(err, &ae):
		if len(ae.Errors) > 0 {
			return ExitRejected, ae.Errors
		}
		if ae.Status == 400 {
			return ExitUsage, []string{ae.Message}
		}
		if ae.Status == 401 {
			return ExitRejected, []string{ae.Message, "the server needs a token: set $GNOMON_TOKEN, give --token-file, or --data (the server's data directory, whose admin.token is read)"}
		}
		if ae.Status >= 500 {
			return ExitUnreachable, []string{ae.Message}
		}
		return ExitRejected, []string{ae.Message}
	}
	if msg, suggestions, ok := strings.Cut(err.Error(), "\n\nDid you mean this?\n"); ok {
		// cobra's suggestion, on the same line
		return ExitUsage, []string{msg + ": did you mean " + strings.Join(strings.Fields(suggestions), " or ") + "?"}
	}
	if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") ||
		strings.Contains(err.Error(), "required flag") || strings.Contains(err.Error(), "accepts") {
		return ExitUsage, []string{err.Error()}
	}
	return ExitRejected, []string{err.Error()}
}

// clientState is what the root command found out about its client: the
// settings it used, and the client itself for the messages of a failed
// command (the task names a misspelled one is compared with).
type clientState struct {
	settings *settings // nil: no client command ran
	client   func() *api.Client
}

// noClient marks a command (and its subcommands) that is not a client of
// a server's API, or finds its settings itself: the root does not look
// for a server and a token before it runs.
const noClient = "gnomon.no-client"

// needsClient reports whether the root finds the client's settings before
// cmd runs.
func needsClient(cmd *cobra.Command) bool {
	if cmd.Name() == cobra.ShellCompRequestCmd || cmd.Name() == cobra.ShellCompNoDescRequestCmd {
		// Shell completion: the flags of the command completed are
		// parsed after this; the client finds its settings when first
		// asked for.
		return false
	}
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[noClient] != "" {
			return false
		}
	}
	return true
}

func newRoot(env *Env) (*cobra.Command, *clientState) {
	if env.Clock == nil {
		env.Clock = clock.System{}
	}
	var fl clientFlags
	root := &cobra.Command{
		Use:   "gnomon",
		Short: "gnomon is a workload-automation scheduler",
		Long: `gnomon runs commands on calendars and after other tasks, from one binary
with an embedded database. "gnomon server" runs the scheduler; the other
commands are clients of its API. The server and the token come from the
flags, else the environment ($GNOMON_SERVER, $GNOMON_TOKEN, ...), else the
current context of the client configuration (gnomon login, gnomon context),
else a server on this machine: http://127.0.0.1:8080 with the admin token of
./gnomon-data. docs/cli.md has the details.`,
	}
	st := &clientState{}
	var tlsConf *tls.Config
	pf := root.PersistentFlags()
	pf.StringVar(&fl.server, "server", "", "server URL (default $GNOMON_SERVER, else the context's, else "+defaultServer+")")
	pf.StringVar(&fl.data, "data", "", "data directory of a server on this machine, whose admin.token the client sends when no other token is given (default $GNOMON_DATA, else the context's, else ./"+defaultData+")")
	pf.StringVar(&fl.tokenFile, "token-file", "", "file holding the token to send, readable by its owner only (default $GNOMON_TOKEN_FILE, else the context's; $GNOMON_TOKEN comes first)")
	// The token is found before a command runs, so that a token file
	// others can read stops every command with the same clear error.
	pf.StringVar(&fl.caFile, "ca-cert", "", "CA certificate (PEM) an https server's certificate is checked against (default $GNOMON_CA_CERT, else the context's, else the self-signed certificate in the data directory, else the system's)")
	pf.Bool("utc", false, "print times in UTC (default: in this machine's zone, $TZ)")
	pf.StringVar(&fl.context, "context", "", "the context of the client configuration to use (default $GNOMON_CONTEXT, else the current one; see gnomon context)")
	resolveAll := func(ctx context.Context) error {
		s, err := resolve(ctx, env, fl)
		if err != nil {
			return err
		}
		tc, err := clientTLS(env, s.caFile)
		if err != nil {
			return err
		}
		st.settings, tlsConf = s, tc
		return nil
	}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if !needsClient(cmd) {
			return nil
		}
		return resolveAll(cmd.Context())
	}
	client := func() *api.Client {
		if st.settings == nil { // shell completion: no command ran
			if resolveAll(context.Background()) != nil {
				return &api.Client{Base: defaultServer}
			}
		}
		c := &api.Client{Base: st.settings.server, Token: st.settings.token}
		if isHTTPS(c.Base) && tlsConf != nil {
			c.HTTP = httpsClient(tlsConf)
		}
		return c
	}
	st.client = client
	dataDir := func() string {
		if st.settings != nil {
			return st.settings.data
		}
		if fl.data != "" {
			return fl.data
		}
		if d := env.Getenv("GNOMON_DATA"); d != "" {
			return d
		}
		return defaultData
	}
	root.AddCommand(
		serverCmd(env),
		migrateCmd(env),
		defCmd(env, client),
		eventCmd(env, client),
		startCmd(env, client),
		taskCmd(env, client),
		statusCmd(env, client),
		whyCmd(env, client),
		backfillCmd(env, client),
		runsCmd(env, client),
		runCmd(env, client),
		exportCmd(env, client),
		forecastCmd(env, client),
		calendarCmd(env, client),
		clockCmd(env, client),
		treeCmd(env, client),
		nodeCmd(env, client),
		clusterCmd(env, client),
		postEventCmd(env, client),
		eventsCmd(env, client),
		alertsCmd(env, client),
		auditCmd(env, client),
		pruneCmd(env, client),
		backupCmd(env, dataDir),
		restoreCmd(env, dataDir),
		tokenCmd(env, client, dataDir),
		linksCmd(env),
		completionCmd(env),
		versionCmd(env),
		loginCmd(env, &fl),
		contextCmd(env, &fl),
		devCmd(env),
	)
	for _, c := range root.Commands() {
		switch c.Name() {
		case "server", "migrate", "links", "completion", "version", "login", "context", "dev":
			if c.Annotations == nil {
				c.Annotations = map[string]string{}
			}
			c.Annotations[noClient] = "yes"
		}
	}
	// --version prints what `gnomon version` does; bare gnomon is a
	// usage error: the help goes to stderr and the exit code is 2.
	root.Version = Build().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return unknownSubcommand(cmd, args[0])
	}
	requireSubcommands(env, root)
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		cmd.SetOut(env.Stderr)
		cmd.Help()
		return usageErr("a command is needed: gnomon COMMAND (gnomon help lists them)")
	}
	root.CompletionOptions.DisableDefaultCmd = true // completionCmd registers the seed names too
	registerCompletions(root, client)
	return root, st
}

// explain maps the error of a command to an exit code and the lines to
// print, as classify does, and adds what the client knows: a task name
// the server does not know is compared with those it does; a server that
// wants a token, or does not answer, is told with where the client
// looked.
func (st *clientState) explain(ctx context.Context, cmd *cobra.Command, err error) (int, []string) {
	code, lines := classify(err)
	s := st.settings
	var ae *api.Error
	switch {
	case cmd != nil && cmd.HasSubCommands() && unknownCommandRE.MatchString(err.Error()):
		// A command with subcommands of its own that takes no
		// arguments (clock, cluster, node): cobra's message, with the
		// closest subcommands.
		if word, uerr := strconv.Unquote(unknownCommandRE.FindStringSubmatch(err.Error())[1]); uerr == nil {
			_, lines = classify(unknownSubcommand(cmd, word))
		}
	case s == nil:
	case errors.Is(err, api.ErrUnreachable):
		lines = append(lines, s.unreachable())
	case errors.As(err, &ae) && ae.Status == 401 && s.tokenFrom == "":
		lines = append([]string{ae.Message}, s.noToken()...)
	case errors.As(err, &ae) && ae.Status == 401:
		lines = []string{ae.Message, "the token sent came from " + s.tokenFrom + "; gnomon context show tells where each setting comes from"}
	case errors.As(err, &ae) && ae.Status == 404 && len(ae.Errors) == 0:
		if name := jobArg(cmd); name != "" && ae.Message == "task "+name+" not found" {
			lines = []string{ae.Message + st.taskSuggestion(ctx, name)}
		}
	}
	return code, lines
}

// jobArg is the task a command was given with -j, if any.
func jobArg(cmd *cobra.Command) string {
	if cmd == nil {
		return ""
	}
	f := cmd.Flags().Lookup("job")
	if f == nil || !f.Changed {
		return ""
	}
	return f.Value.String()
}

// taskSuggestion is "; did you mean NAME?" for a task name the server
// does not know, from the names it does; empty when none is close or the
// server does not list them within 2 s.
func (st *clientState) taskSuggestion(ctx context.Context, name string) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	names, err := st.client().Tasks(ctx)
	if err != nil {
		return ""
	}
	if s := suggest.Phrase(suggest.Closest(name, names), nil); s != "" {
		return "; " + s
	}
	return ""
}

// flagError is the error of a flag the command does not have, or of a
// bad flag value: a usage error, with the flags closest to an unknown
// one.
func flagError(c *cobra.Command, err error) error {
	msg := err.Error()
	var word string
	switch {
	case strings.HasPrefix(msg, "unknown flag: "):
		word = strings.TrimPrefix(msg, "unknown flag: ")
	case strings.HasPrefix(msg, "unknown shorthand flag: 'c'") && c.Flags().Lookup("count") != nil:
		// -c was the count of the listings; -n is.
		return usageErr("%s; did you mean -n (--count)?", msg)
	case strings.HasPrefix(msg, "unknown shorthand flag: "):
		// "unknown shorthand flag: 'x' in -xyz": perhaps a long flag
		// written with one dash.
		if _, arg, ok := strings.Cut(msg, " in "); ok && len(arg) > 2 {
			word = "-" + arg
		}
	default:
		return usageErr("%v", err)
	}
	var names []string
	seen := map[string]bool{}
	visit := func(f *pflag.Flag) {
		if f.Hidden || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		names = append(names, "--"+f.Name)
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if s := suggest.Phrase(suggest.Closest(word, names), nil); s != "" {
		return usageErr("%s; %s", msg, s)
	}
	return usageErr("%s (%s --help lists the flags)", msg, c.CommandPath())
}

// requireSubcommands makes each command below root that only groups
// subcommands (token, calendar, tree...) a usage error when none is
// given, or an unknown one: cobra would print its help and exit 0.
func requireSubcommands(env *Env, root *cobra.Command) {
	for _, c := range root.Commands() {
		if c.HasSubCommands() && !c.Runnable() {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return unknownSubcommand(cmd, args[0])
				}
				cmd.SetOut(env.Stderr)
				cmd.Help()
				return usageErr("a command is needed: %s COMMAND (%s lists them)", cmd.CommandPath(), helpPath(cmd))
			}
		}
		requireSubcommands(env, c)
	}
}

// helpPath is the gnomon help command that lists cmd's subcommands.
func helpPath(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return "gnomon help"
	}
	return "gnomon help " + strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// unknownSubcommand is the error of a word that is not a subcommand of
// cmd, with the closest ones.
func unknownSubcommand(cmd *cobra.Command, word string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	if s := suggest.Phrase(suggest.Closest(word, names), nil); s != "" {
		return usageErr("unknown command %q for %q: %s", word, cmd.CommandPath(), s)
	}
	return usageErr("unknown command %q for %q (%s lists them)", word, cmd.CommandPath(), helpPath(cmd))
}

// unknownCommandRE reads cobra's error of a command that takes no
// arguments given one: unknown command "WORD" for "PATH".
var unknownCommandRE = regexp.MustCompile(`^unknown command ("(?:[^"\\]|\\.)*") for "[^"]*"$`)

func defCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		file, syntax       string
		check, apply, sync bool
		out                *outputFormat
	)
	c := &cobra.Command{
		Use:   "def [-c] [--apply | --sync] [--syntax SYNTAX] -f FILE",
		Short: "validate (-c) or validate and apply a definition file",
		Long: `def validates a definition file and, without -c, applies it: all of it or
nothing.

As written, an insert_task of a task that exists is an error. With --apply
the file is applied declaratively, as gnomon server --definitions applies
its files: an insert of an existing task (or calendar) replaces its
definition, so that the output of gnomon export can be edited and applied
again. --sync does the same and also deletes what the file does not define:
the tasks and groups if the file defines at least one task or group, the
configurations if it defines at least one configuration, the calendars if
it defines at least one calendar.

A file is in the task language, configuration JSON or a timeperiod tree
file: its shape tells which (JSON with a top-level "trees" member is a tree
file, other JSON configurations), or --syntax declares it, and the file is
then read in that syntax only.

The .ics files that ics_file lines name are read from beside FILE and sent
with it: the server stores the dates they hold, not the files. Both print what changes (with -c:
what would change) before the result: the definitions added, those changed
with each attribute that changes, and those deleted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				return usageErr("-f FILE is required")
			}
			if apply && sync {
				return usageErr("--apply and --sync exclude each other (--sync applies too)")
			}
			if _, err := defs.ParseSyntax(syntax); err != nil {
				return usageErr("--syntax: %v", err)
			}
			text, err := readDefinitions(file)
			if err != nil {
				return err
			}
			files, err := icsFiles(file, text, env.Stderr, env.Clock.Now())
			if err != nil {
				return err
			}
			if !apply && !sync {
				var resp *api.DefineResponse
				err = withProgress(cmd.Context(), env, "def: the server checks "+file, nil, func() (err error) {
					resp, err = client().DefineFile(cmd.Context(), api.DefineRequest{File: file, Text: text, Syntax: syntax, Check: check, Files: files})
					return err
				})
				if err != nil {
					return err
				}
				if out.structured() {
					return out.write(env.Stdout, resp)
				}
				fmt.Fprintln(env.Stdout, resp.Message)
				return nil
			}
			req := api.DefineRequest{File: file, Text: text, Syntax: syntax, Check: check, Mode: api.ModeApply, Files: files}
			if sync {
				req.Mode = api.ModeSync
			}
			var resp *api.DefineResponse
			err = withProgress(cmd.Context(), env, "def: the server checks and applies "+file, nil, func() (err error) {
				resp, err = client().DefineFile(cmd.Context(), req)
				return err
			})
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, resp)
			}
			writeChanges(env.Stdout, resp.Changes, sync)
			fmt.Fprintln(env.Stdout, resp.Message)
			return nil
		},
	}
	c.Flags().StringVarP(&file, "file", "f", "", "definition file")
	c.Flags().BoolVarP(&check, "check", "c", false, "validate only; change nothing (with --apply or --sync: print what would change)")
	c.Flags().BoolVar(&apply, "apply", false, "apply declaratively: an insert of an existing task replaces it")
	c.Flags().BoolVar(&sync, "sync", false, "apply declaratively and delete what the file does not define")
	c.Flags().StringVar(&syntax, "syntax", "", "the file's syntax: language, configurations or trees (default: the file tells by its shape)")
	out = addOutput(c, "the server's answer: its message and, with --apply or --sync, the changes (POST /api/v1/definitions, docs/api.md)")
	return c
}

// readDefinitions reads a definition file, refusing what is not one. The
// file goes to the server inside a JSON string, whose encoder would send
// a byte that is not UTF-8 as U+FFFD without a word: the server would
// validate and store another text than the file holds. Such a file is
// refused here, as the server refuses it.
func readDefinitions(file string) (string, error) {
	st, err := os.Stat(file)
	if err != nil {
		return "", usageErr("cannot read %s: %v", file, err)
	}
	if !st.Mode().IsRegular() {
		return "", usageErr("cannot read %s: not a regular file", file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", usageErr("cannot read %s: %v", file, err)
	}
	if !utf8.Valid(b) {
		return "", notUTF8(file, b)
	}
	return string(b), nil
}

// notUTF8 is the refusal of a file that is not UTF-8 text, worded as the
// server words it, at the file's first invalid byte: its line, its column
// and its offset in the file, both counted in bytes from 1 and 0.
func notUTF8(file string, b []byte) error {
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	line := 1 + bytes.Count(b[:i], []byte{'\n'})
	col := i - bytes.LastIndexByte(b[:i], '\n')
	return &exitError{code: ExitRejected, msg: fmt.Sprintf("%s:%d: not UTF-8 text: byte 0x%02x (column %d, offset %d) is not UTF-8; save the file as UTF-8",
		file, line, b[i], col, i)}
}

// eventNames are the events a task takes, in the order the help gives
// them.
var eventNames = []string{"start", "abort", "freeze", "reset", "green", "red"}

func eventCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		event  string
		params []string
	)
	c := &cobra.Command{
		Use:   "event NAME -e EVENT [-p NAME=VALUE]...",
		Short: "send an event to a task: start, abort, freeze, reset, green, red",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args, true)
			if err != nil {
				return err
			}
			if event == "" {
				return usageErr("-e EVENT is required: start, abort, freeze, reset, green or red")
			}
			if _, ok := job.ParseAction(event); !ok {
				hint := suggest.Phrase(suggest.Closest(event, eventNames), nil)
				if hint != "" {
					hint = "; " + hint
				}
				return usageErr("invalid send event %q%s (want start, abort, freeze, reset, green or red)", event, hint)
			}
			values, err := paramValues(params)
			if err != nil {
				return err
			}
			return client().EventParams(cmd.Context(), name, event, values)
		},
	}
	jobFlag(c, "the task")
	c.Flags().StringVarP(&event, "event", "e", "", "event name")
	paramFlag(c, &params)
	return c
}

// jobFlag gives a command -j NAME, the task it works on, which may also be
// given as a positional NAME (see oneTask).
func jobFlag(c *cobra.Command, what string) {
	c.Flags().StringP("job", "j", "", what+" (or give it as NAME)")
}

func taskCmd(env *Env, client func() *api.Client) *cobra.Command {
	var out *outputFormat
	c := &cobra.Command{
		Use:   "task NAME [-o json|yaml]",
		Short: "print a task definition",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args, true)
			if err != nil {
				return err
			}
			v, err := client().Task(cmd.Context(), name)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, v)
			}
			writeTask(env.Stdout, v)
			return nil
		},
	}
	jobFlag(c, "the task")
	out = addOutput(c, "the task's definition and state as the API answers them (GET /api/v1/tasks/{name}, docs/api.md)")
	return c
}

func statusCmd(env *Env, client func() *api.Client) *cobra.Command {
	var out *outputFormat
	c := &cobra.Command{
		Use:   "status NAME [-o json|yaml|wide]",
		Short: "print the latest status of a task (a bundle with its children)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args, true)
			if err != nil {
				return err
			}
			s, err := client().Status(cmd.Context(), name)
			if err != nil {
				return err
			}
			if out.structured() {
				return out.write(env.Stdout, s)
			}
			if isSeed(cmd) {
				writeStatus(env.Stdout, s, stamp)
				return nil
			}
			tf := timesOf(cmd, env)
			t := newTable(env.Stdout, "task", "start", "end", "status")
			for _, r := range s.Rows {
				t.row(strings.Repeat(" ", r.Level)+termsafe.String(r.Name), tf.at(r.Start), tf.at(r.End), r.Status.String())
			}
			t.flush()
			writeStatusNotes(env.Stdout, s, tf.at)
			return nil
		},
	}
	jobFlag(c, "the task")
	out = addOutput(c, "the rows as the API answers them (GET /api/v1/tasks/{name}/status, docs/api.md)")
	return c
}

// parseDay reads a day: YYYY-MM-DD, or the seed's DD/MM/YYYY.
func parseDay(flag, s string) (string, error) {
	for _, layout := range []string{time.DateOnly, "02/01/2006"} {
		if d, err := time.Parse(layout, s); err == nil {
			return d.Format(time.DateOnly), nil
		}
	}
	return "", usageErr("%s must be a date as YYYY-MM-DD (or the seed's DD/MM/YYYY), got %q", flag, s)
}

// addCount gives a command -n/--count N, with its default.
func addCount(c *cobra.Command, count *int, def int, what string) {
	c.Flags().IntVarP(count, "count", "n", def, what)
}

func runsCmd(env *Env, client func() *api.Client) *cobra.Command {
	var (
		date  string
		count int
		fires bool
		out   *outputFormat
	)
	c := &cobra.Command{
		Use:   "runs NAME [-n N] [-d YYYY-MM-DD] [--fires] [-o json|yaml|wide]",
		Short: "print past runs, most recent first, with how each ended (--fires: what became of each planned occurrence)",
		Long: `runs prints the runs of a task, most recent first: each run's number (for
gnomon run ID), its start and end, its status, exit code and message; a
bundle run is followed by its children's runs, indented. -o wide adds who
started and ended each run, what started it and its result.

Called as schd_runs it prints the seed's table (and takes the seed's -c N
and -d DD/MM/YYYY).`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := oneTask(cmd, args, true)
			if err != nil {
				return err
			}
			changed := cmd.Flags().Changed("count") || cmd.Flags().Changed("seed-count")
			if !changed && isSeed(cmd) {
				count = 1 // the seed's default
			}
			if count < 1 {
				flag := "-n"
				if cmd.Flags().Changed("seed-count") {
					flag = "-c"
				}
				return usageErr("%s must be at least 1, got %d", flag, count)
			}
			day := ""
			if date != "" {
				if day, err = parseDay("-d", date); err != nil {
					return err
				}
			}
			if fires {
				return listFires(cmd, env, client(), name, day, count, *out)
			}
			none := "no runs recorded yet for " + name
			if date != "" {
				none = fmt.Sprintf("no runs of %s started on %s", name, date)
			}
			all, _, more, err := collect(count, func(n int, cursor string) ([]api.RunView, string, error) {
				rs, err := client().ListRuns(cmd.Context(), api.RunsQuery{Task: name, Count: n, Day: day, Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return rs.Runs, rs.Next, nil
			})
			switch {
			case err != nil:
				return err
			case out.structured():
				return out.write(env.Stdout, all)
			case len(all) == 0 && isSeed(cmd):
				runsHeader(env.Stdout, all)
				fmt.Fprintln(env.Stdout, termsafe.String(none))
			case len(all) == 0:
				fmt.Fprintln(env.Stdout, termsafe.String(none))
			case isSeed(cmd):
				// The seed's table: the runs asked for, without a word on
				// those left out (-c 1 by default).
				runsHeader(env.Stdout, all)
				writeRunRows(env.Stdout, all)
				return nil
			default:
				writeRunsTable(env.Stdout, all, *out == "wide", timesOf(cmd, env))
			}
			if more {
				fmt.Fprintf(env.Stderr, "more runs are recorded than the %d shown: raise -n to see them\n", count)
			}
			return nil
		},
	}
	jobFlag(c, "the task")
	addCount(c, &count, 20, "number of runs (called as schd_runs: 1 unless -c N)")
	// The seed's -c N, which schd_runs takes.
	c.Flags().IntVarP(&count, "seed-count", "c", 20, "the seed's spelling of -n")
	c.Flags().MarkHidden("seed-count")
	c.Flags().StringVarP(&date, "date", "d", "", "only runs started on this day (YYYY-MM-DD; DD/MM/YYYY is read too), in the server's time zone")
	out = addOutput(c, "the runs as the API answers them (GET /api/v1/tasks/{name}/runs), a list")
	c.Flags().BoolVar(&fires, "fires", false, "list the planned occurrences of the task's time trigger (or a configuration's triggers, at their events' instants) and their fate: ran, skipped (and why) or missed")
	return c
}

// listFires prints what became of a task's planned occurrences.
func listFires(cmd *cobra.Command, env *Env, c *api.Client, name, day string, count int, out outputFormat) error {
	all, _, more, err := collect(count, func(n int, cursor string) ([]job.Fire, string, error) {
		fs, err := c.ListFires(cmd.Context(), name, n, day, cursor)
		if err != nil {
			return nil, "", err
		}
		return fs.Fires, fs.Next, nil
	})
	switch {
	case err != nil:
		return err
	case out.structured():
		return out.write(env.Stdout, all)
	case len(all) == 0 && day != "":
		fmt.Fprintf(env.Stdout, "no fires recorded for %s on %s\n", termsafe.String(name), day)
	case len(all) == 0:
		fmt.Fprintln(env.Stdout, "no fires recorded yet for "+termsafe.String(name))
	default:
		tf := timesOf(cmd, env)
		t := newTable(env.Stdout, "scheduled", "fate", "run", "reason")
		for _, f := range all {
			run := "-"
			if f.RunID != 0 {
				run = fmt.Sprint(f.RunID)
			}
			t.row(tf.at(f.Scheduled), termsafe.String(string(f.Fate)), run, termsafe.String(f.Reason))
		}
		t.flush()
	}
	if more {
		fmt.Fprintf(env.Stderr, "more fires are recorded than the %d shown: raise -n to see them\n", count)
	}
	return nil
}

func exportCmd(env *Env, client func() *api.Client) *cobra.Command {
	var name, treeFile, cal string
	c := &cobra.Command{
		Use:   "export [NAME | --calendar NAME | --tree-file NAME]",
		Short: "print definitions in the definition language, or a tree file as JSON",
		Long: `export prints the definitions in the definition language: all of them
(the named calendars first), or one task (a bundle with its children) with
the calendars it names, or one calendar (--calendar). With --tree-file it prints a tree
file as the server holds it, in JSON: NAME is the file's name as it was
defined (the path given to gnomon def -f, or to --definitions; gnomon tree
list shows it). Defined again under that name, the output changes nothing.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := oneTask(cmd, args, false); err != nil {
				return err
			}
			if treeFile != "" {
				if name != "" || cal != "" {
					return usageErr("-j, --calendar and --tree-file exclude each other")
				}
				return client().ExportTreeFile(cmd.Context(), treeFile, env.Stdout)
			}
			if cal != "" {
				if name != "" {
					return usageErr("-j and --calendar exclude each other")
				}
				return client().ExportCalendar(cmd.Context(), cal, env.Stdout)
			}
			return client().Export(cmd.Context(), name, env.Stdout)
		},
	}
	c.Flags().StringVarP(&name, "job", "j", "", "only this task (a bundle with its children) and the calendars it names (or give it as NAME)")
	c.Flags().StringVar(&cal, "calendar", "", "only this named calendar")
	c.Flags().StringVar(&treeFile, "tree-file", "", "print this tree file, as JSON")
	return c
}

func linksCmd(env *Env) *cobra.Command {
	return &cobra.Command{
		Use:   "links DIR",
		Short: "create the schd_* links to this binary in DIR",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			for _, n := range []string{"schd_def", "schd_event", "schd_task", "schd_status", "schd_runs"} {
				p := filepath.Join(args[0], n)
				os.Remove(p)
				if err := os.Symlink(self, p); err != nil {
					return err
				}
				fmt.Fprintln(env.Stdout, p)
			}
			return nil
		},
	}
}
