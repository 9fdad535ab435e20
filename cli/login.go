package cli

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon/api"
	"github.com/gnomon-sched/gnomon/auth"
)

// loginTimeout bounds the requests gnomon login makes of the server.
const loginTimeout = 30 * time.Second

// needConfig returns the configuration file's path, or the error saying
// why there is none.
func needConfig(env *Env) (string, error) {
	p := configPath(env)
	if p == "" {
		return "", usageErr("no client configuration: $HOME, $XDG_CONFIG_HOME and $GNOMON_CONFIG are unset; set GNOMON_CONFIG to the file to use")
	}
	return p, nil
}

func loginCmd(env *Env, fl *clientFlags) *cobra.Command {
	var name, tokenCmd string
	c := &cobra.Command{
		Use:   "login --server URL (--token-file FILE | --token-command CMD) [--ca-cert FILE] [--name CONTEXT] [--data DIR]",
		Short: "check a server and a token, and save them as a context of the client configuration",
		Long: `login makes the command line work with a server from any directory. It
checks that the server answers /healthz and that the token works (it asks
the server whose token it is), then saves a context in the client
configuration ($GNOMON_CONFIG, else $XDG_CONFIG_HOME/gnomon/config.json,
else ~/.config/gnomon/config.json; readable by its owner only) and makes
it the current one.

The context keeps the token file's path, or the command that prints the
token (run with sh -c each time a command needs it), never the token
itself; --ca-cert and --data are kept too. Paths are saved absolute.
--name defaults to the server's host and port; a context of that name is
replaced. See gnomon context, and docs/cli.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := needConfig(env)
			if err != nil {
				return err
			}
			if err := checkServer(fl.server); err != nil {
				return usageErr("--server: %v", err)
			}
			switch {
			case fl.tokenFile == "" && tokenCmd == "":
				return usageErr("--token-file FILE or --token-command CMD is required (gnomon token create prints a token to save in a file)")
			case fl.tokenFile != "" && tokenCmd != "":
				return usageErr("--token-file and --token-command exclude each other: give one")
			}
			if name == "" {
				u, _ := url.Parse(fl.server)
				name = u.Host
			}
			if err := checkContextName(name); err != nil {
				return usageErr("--name: %v", err)
			}
			cc := &clientContext{Server: strings.TrimSuffix(fl.server, "/"), TokenCommand: tokenCmd}
			for _, p := range []struct {
				dst       *string
				src, flag string
			}{
				{&cc.TokenFile, fl.tokenFile, "--token-file"},
				{&cc.CACert, fl.caFile, "--ca-cert"},
				{&cc.Data, fl.data, "--data"},
			} {
				if p.src == "" {
					continue
				}
				abs, err := filepath.Abs(p.src)
				if err != nil {
					return usageErr("%s: %v", p.flag, err)
				}
				*p.dst = abs
			}
			var token string
			if cc.TokenFile != "" {
				if token, err = auth.ReadTokenFile(cc.TokenFile); err != nil {
					return usageErr("--token-file: %v", err)
				}
			} else if token, err = tokenCommand(cmd.Context(), env, tokenCmd); err != nil {
				return usageErr("--token-command: %v", err)
			}
			tc, err := clientTLS(env, cc.CACert)
			if err != nil {
				return err
			}
			client := &api.Client{Base: cc.Server, Token: token}
			if isHTTPS(cc.Server) {
				client.HTTP = httpsClient(tc)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), loginTimeout)
			defer cancel()
			if err := client.Health(ctx); err != nil {
				return &exitError{code: ExitUnreachable, msg: fmt.Sprintf("%v (GET /healthz); nothing was saved", err)}
			}
			who, err := client.Whoami(ctx)
			if err != nil {
				code, _ := classify(err)
				return &exitError{code: code, msg: fmt.Sprintf("the server refused the token (GET /api/v1/whoami): %v; nothing was saved", err)}
			}
			cfg, _, err := loadConfig(path)
			if err != nil {
				return err
			}
			cfg.Contexts[name] = cc
			cfg.Current = name
			if err := cfg.save(path); err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "logged in to %s as %s (%s); context %s is current, saved in %s\n", cc.Server, who.Name, who.Role, name, path)
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "", "the context's name (default: the server's host and port)")
	c.Flags().StringVar(&tokenCmd, "token-command", "", "a command (run with sh -c) that prints the token, such as \"pass show gnomon/prod\"; instead of --token-file")
	return c
}

func contextCmd(env *Env, fl *clientFlags) *cobra.Command {
	c := &cobra.Command{
		Use:   "context",
		Short: "list, show, switch and delete the contexts of the client configuration",
		Long: `A context is a server, the token to send it (a file, or a command that
prints it), its certificate authority and, for a server on this machine,
its data directory. gnomon login adds one; the current context is used
when no flag or environment variable names the server or the token
(docs/cli.md, "Where the settings come from").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(env.Stderr)
			cmd.Help()
			return usageErr("a subcommand is needed: gnomon context list|show|use NAME|delete NAME")
		},
	}
	var listOut, showOut *outputFormat
	list := &cobra.Command{
		Use:   "list",
		Short: "list the contexts; * marks the current one",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := needConfig(env)
			if err != nil {
				return err
			}
			cfg, exists, err := loadConfig(path)
			if err != nil {
				return err
			}
			if listOut.structured() {
				if cfg.Contexts == nil {
					cfg.Contexts = map[string]*clientContext{}
				}
				return listOut.write(env.Stdout, cfg)
			}
			if !exists || len(cfg.Contexts) == 0 {
				fmt.Fprintf(env.Stdout, "no contexts in %s (gnomon login --server URL --token-file FILE adds one)\n", path)
				return nil
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "CURRENT\tNAME\tSERVER\tTOKEN")
			for _, n := range cfg.names() {
				cc := cfg.Contexts[n]
				cur := ""
				if n == cfg.Current {
					cur = "*"
				}
				tok := "-"
				switch {
				case cc.TokenFile != "":
					tok = cc.TokenFile
				case cc.TokenCommand != "":
					tok = "command: " + cc.TokenCommand
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cur, n, cc.Server, tok)
			}
			return tw.Flush()
		},
	}
	use := &cobra.Command{
		Use:   "use NAME",
		Short: "make a context the current one",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editConfig(env, func(cfg *clientConfig) (string, error) {
				if cfg.Contexts[args[0]] == nil {
					return "", usageErr("%s", noContext(args[0], cfg.names()))
				}
				cfg.Current = args[0]
				return fmt.Sprintf("context %s is current (%s)", args[0], cfg.Contexts[args[0]].Server), nil
			})
		},
	}
	del := &cobra.Command{
		Use:   "delete NAME",
		Short: "delete a context (the token file it names is left alone)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return editConfig(env, func(cfg *clientConfig) (string, error) {
				if cfg.Contexts[args[0]] == nil {
					return "", usageErr("%s", noContext(args[0], cfg.names()))
				}
				delete(cfg.Contexts, args[0])
				if cfg.Current == args[0] {
					cfg.Current = ""
					return fmt.Sprintf("context %s deleted; no context is current now (gnomon context use NAME)", args[0]), nil
				}
				return fmt.Sprintf("context %s deleted", args[0]), nil
			})
		},
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "show the server, token, certificate authority and data directory a command would use, and where each comes from",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := resolve(cmd.Context(), env, *fl)
			if err != nil {
				return err
			}
			if showOut.structured() {
				return showOut.write(env.Stdout, s.view())
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			cur := s.context
			if cur == "" {
				cur = "none"
			}
			config := s.config
			if config == "" {
				config = "none"
			}
			fmt.Fprintf(tw, "context\t%s\n", cur)
			fmt.Fprintf(tw, "configuration\t%s\n", config)
			fmt.Fprintf(tw, "server\t%s\t(%s)\n", s.server, s.serverFrom)
			if s.tokenFrom != "" {
				fmt.Fprintf(tw, "token\tfrom %s\n", s.tokenFrom)
			} else {
				fmt.Fprintf(tw, "token\tnone\n")
			}
			if s.caFile != "" {
				fmt.Fprintf(tw, "ca-cert\t%s\t(%s)\n", s.caFile, s.caFrom)
			} else {
				fmt.Fprintf(tw, "ca-cert\tthe system's\n")
			}
			fmt.Fprintf(tw, "data\t%s\t(%s)\n", s.data, s.dataFrom)
			return tw.Flush()
		},
	}
	listOut = addOutput(list, "the client configuration: current and contexts, as the file holds them")
	showOut = addOutput(show, "context, configuration, server, server_from, token_from, ca_cert, ca_from, data, data_from")
	c.AddCommand(list, use, show, del)
	return c
}

// editConfig reads the configuration, changes it with edit, saves it and
// prints what edit says.
func editConfig(env *Env, edit func(*clientConfig) (string, error)) error {
	path, err := needConfig(env)
	if err != nil {
		return err
	}
	cfg, _, err := loadConfig(path)
	if err != nil {
		return err
	}
	msg, err := edit(cfg)
	if err != nil {
		return err
	}
	if err := cfg.save(path); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, msg)
	return nil
}

// settingsView is what gnomon context show -o json prints: the settings a
// command would use and where each comes from (the token itself never).
type settingsView struct {
	Context       string `json:"context,omitempty"`
	Configuration string `json:"configuration,omitempty"`
	Server        string `json:"server"`
	ServerFrom    string `json:"server_from"`
	TokenFrom     string `json:"token_from,omitempty"`
	CACert        string `json:"ca_cert,omitempty"`
	CAFrom        string `json:"ca_from,omitempty"`
	Data          string `json:"data"`
	DataFrom      string `json:"data_from"`
}

// view is s as gnomon context show -o json prints it.
func (s *settings) view() settingsView {
	return settingsView{Context: s.context, Configuration: s.config, Server: s.server, ServerFrom: s.serverFrom, TokenFrom: s.tokenFrom,
		CACert: s.caFile, CAFrom: s.caFrom, Data: s.data, DataFrom: s.dataFrom}
}
