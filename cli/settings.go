package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/internal/selfsign"
)

// defaultServer is the server a client reaches when nothing names one.
const defaultServer = "http://127.0.0.1:8080"

// defaultData is the data directory a client reads when nothing names one.
const defaultData = "gnomon-data"

// clientFlags are the root's flags that say where the server is and how to
// reach it.
type clientFlags struct {
	server, data, tokenFile, caFile, context string
}

// settings are what a client uses, each with where it came from: a flag,
// the environment, a context of the configuration file, or the default.
// docs/cli.md, "Where the settings come from", has the order.
type settings struct {
	server, serverFrom string
	token, tokenFrom   string // tokenFrom empty: no token
	caFile, caFrom     string // caFile empty: the system's authorities
	data, dataFrom     string
	// context is the context used, if any; config the configuration
	// file's path and configNote what became of it.
	context, config, configNote string
	// tried lists the places a token was looked for, in order, with what
	// was found there, for the message of a server that wants one.
	tried []string
}

// resolve finds the client's settings. The configuration file is read
// only when a setting is not given by a flag or the environment, so a
// broken file stops only the commands that need it.
func resolve(ctx context.Context, env *Env, fl clientFlags) (*settings, error) {
	s := &settings{config: configPath(env)}
	var (
		cc     *clientContext
		loaded bool
	)
	useContext := func() (*clientContext, error) {
		if loaded {
			return cc, nil
		}
		loaded = true
		var err error
		cc, err = s.loadContext(env, fl.context)
		return cc, err
	}

	// The server.
	switch {
	case fl.server != "":
		s.server, s.serverFrom = fl.server, "--server"
	case env.Getenv("GNOMON_SERVER") != "":
		s.server, s.serverFrom = env.Getenv("GNOMON_SERVER"), "$GNOMON_SERVER"
	default:
		c, err := useContext()
		if err != nil {
			return nil, err
		}
		if c != nil {
			s.server, s.serverFrom = c.Server, s.contextFrom()
		} else {
			s.server, s.serverFrom = defaultServer, "the default"
		}
	}

	// The data directory: given, else the context's, else the default.
	explicit := ""
	switch {
	case fl.data != "":
		s.data, s.dataFrom, explicit = fl.data, "--data", fl.data
	case env.Getenv("GNOMON_DATA") != "":
		s.data, s.dataFrom, explicit = env.Getenv("GNOMON_DATA"), "$GNOMON_DATA", env.Getenv("GNOMON_DATA")
	}

	// The token.
	switch t := strings.TrimSpace(env.Getenv("GNOMON_TOKEN")); {
	case t != "":
		if _, _, err := auth.ParseToken(t); err != nil {
			return nil, usageErr("$GNOMON_TOKEN: %v", err)
		}
		s.token, s.tokenFrom = t, "$GNOMON_TOKEN"
	case fl.tokenFile != "":
		if err := s.readTokenFile(fl.tokenFile, "--token-file "+fl.tokenFile); err != nil {
			return nil, err
		}
	case env.Getenv("GNOMON_TOKEN_FILE") != "":
		if err := s.readTokenFile(env.Getenv("GNOMON_TOKEN_FILE"), "$GNOMON_TOKEN_FILE "+env.Getenv("GNOMON_TOKEN_FILE")); err != nil {
			return nil, err
		}
	}
	s.tried = append(s.tried, "$GNOMON_TOKEN, --token-file and $GNOMON_TOKEN_FILE (none given)")
	if s.tokenFrom == "" && explicit != "" {
		if err := s.adminToken(explicit, s.dataFrom); err != nil {
			return nil, err
		}
	}
	if s.tokenFrom == "" {
		c, err := useContext()
		if err != nil {
			return nil, err
		}
		switch {
		case c == nil:
			s.tried = append(s.tried, "a context of the client configuration ("+s.configNote+")")
		case c.TokenFile != "":
			if err := s.readTokenFile(c.TokenFile, s.contextFrom()+" (token_file "+c.TokenFile+")"); err != nil {
				return nil, err
			}
		case c.TokenCommand != "":
			t, err := tokenCommand(ctx, env, c.TokenCommand)
			if err != nil {
				return nil, usageErr("%s: token_command: %v", s.contextFrom(), err)
			}
			s.token, s.tokenFrom = t, s.contextFrom()+" (token_command)"
		default:
			s.tried = append(s.tried, s.contextFrom()+" (no token_file or token_command)")
		}
		if s.data == "" && c != nil && c.Data != "" {
			s.data, s.dataFrom = c.Data, s.contextFrom()
		}
	}
	if s.data == "" {
		s.data, s.dataFrom = defaultData, "the default"
	}
	// The admin token of ./gnomon-data is not sent to a context's server:
	// it is another server's, and a context gets only its own token.
	if s.tokenFrom == "" && s.data != explicit && (s.context == "" || s.dataFrom != "the default") {
		if err := s.adminToken(s.data, s.dataFrom); err != nil {
			return nil, err
		}
	}

	// The certificate authority, of an https server.
	switch {
	case !isHTTPS(s.server) && fl.caFile == "" && env.Getenv("GNOMON_CA_CERT") == "":
	case fl.caFile != "":
		s.caFile, s.caFrom = fl.caFile, "--ca-cert"
	case env.Getenv("GNOMON_CA_CERT") != "":
		s.caFile, s.caFrom = env.Getenv("GNOMON_CA_CERT"), "$GNOMON_CA_CERT"
	default:
		if explicit != "" {
			ok, err := s.ownCert(explicit, s.dataFrom)
			if err != nil {
				return nil, err
			}
			if ok {
				return s, nil
			}
		}
		c, err := useContext()
		if err != nil {
			return nil, err
		}
		if c != nil && c.CACert != "" {
			s.caFile, s.caFrom = c.CACert, s.contextFrom()
			return s, nil
		}
		if s.data != explicit {
			if _, err := s.ownCert(s.data, s.dataFrom); err != nil {
				return nil, err
			}
		}
	}
	return s, nil
}

// loadContext reads the configuration file and returns the context asked
// for (--context, $GNOMON_CONTEXT) or the current one; nil when there is
// none.
func (s *settings) loadContext(env *Env, flag string) (*clientContext, error) {
	name, from := flag, "--context"
	if name == "" {
		name, from = env.Getenv("GNOMON_CONTEXT"), "$GNOMON_CONTEXT"
	}
	if s.config == "" {
		if name != "" {
			return nil, usageErr("%s %s: no client configuration: $HOME, $XDG_CONFIG_HOME and $GNOMON_CONFIG are unset", from, name)
		}
		s.configNote = "$HOME, $XDG_CONFIG_HOME and $GNOMON_CONFIG are unset"
		return nil, nil
	}
	cfg, exists, err := loadConfig(s.config)
	if err != nil {
		return nil, err
	}
	switch {
	case name != "":
	case !exists:
		s.configNote = s.config + " does not exist"
		return nil, nil
	case cfg.Current == "":
		s.configNote = s.config + " names no current context"
		return nil, nil
	default:
		name, from = cfg.Current, ""
	}
	c := cfg.Contexts[name]
	if c == nil {
		return nil, usageErr("%s %s: %s in %s", from, name, noContext(name, cfg.names()), s.config)
	}
	s.context = name
	return c, nil
}

// contextFrom names the context a setting came from.
func (s *settings) contextFrom() string { return "context " + s.context }

// readTokenFile reads the token from a file a flag, the environment or a
// context named.
func (s *settings) readTokenFile(path, from string) error {
	t, err := auth.ReadTokenFile(path)
	if err != nil {
		return usageErr("%s: %v", from, err)
	}
	s.token, s.tokenFrom = t, from
	return nil
}

// adminToken reads the admin token a server on this machine wrote in its
// data directory, if it is there.
func (s *settings) adminToken(data, from string) error {
	p := filepath.Join(data, auth.AdminTokenFile)
	t, err := auth.ReadTokenFile(p)
	if abs, err := filepath.Abs(p); err == nil {
		p = abs // for the messages
	}
	if errors.Is(err, fs.ErrNotExist) {
		s.tried = append(s.tried, fmt.Sprintf("the admin token %s (data directory from %s): not found", p, from))
		return nil
	}
	if err != nil {
		return usageErr("%v", err)
	}
	s.token, s.tokenFrom = t, p+" (the data directory, "+from+")"
	return nil
}

// ownCert takes the self-signed certificate of a server on this machine,
// in its data directory, if it is there.
func (s *settings) ownCert(data, from string) (bool, error) {
	p := filepath.Join(data, selfsign.CertFile)
	_, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, usageErr("%v", err)
	}
	s.caFile, s.caFrom = p, "the data directory ("+from+")"
	return true, nil
}

// tokenCommandTimeout bounds a context's token command.
const tokenCommandTimeout = 30 * time.Second

// tokenCommand runs a context's token_command with sh -c and returns the
// token it prints.
func tokenCommand(ctx context.Context, env *Env, command string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, tokenCommandTimeout)
	defer cancel()
	var stderr strings.Builder
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg != "" {
			return "", fmt.Errorf("%q: %v: %s", command, err, msg)
		}
		return "", fmt.Errorf("%q: %v", command, err)
	}
	t := strings.TrimSpace(string(out))
	if _, _, err := auth.ParseToken(t); err != nil {
		return "", fmt.Errorf("%q printed no token: %v", command, err)
	}
	return t, nil
}

// noToken is the message of a server that wants a token the client did
// not find: where it looked, and how to give one.
func (s *settings) noToken() []string {
	return []string{
		"no token was found; tried: " + strings.Join(s.tried, "; "),
		"log in once with: gnomon login --server URL --token-file FILE (docs/cli.md), or give --data DIR (or set GNOMON_DATA) to the data directory of a server on this machine, or set GNOMON_TOKEN",
	}
}

// unreachable is the hint of a server that does not answer: where its URL
// came from and how to name another.
func (s *settings) unreachable() string {
	if s.serverFrom != "the default" {
		return fmt.Sprintf("the server's URL came from %s", s.serverFrom)
	}
	note := s.configNote
	if note == "" {
		note = "none"
	}
	return fmt.Sprintf("no server was named (--server, $GNOMON_SERVER, a context: %s), so the default %s was tried; log in once with: gnomon login --server URL --token-file FILE (docs/cli.md), or give --server URL", note, defaultServer)
}
