package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/gnomon-sched/gnomon/internal/suggest"
)

// The client configuration: named contexts, each a server with the
// certificate authority, the token and the data directory to use with it,
// and the current one. docs/cli.md, "Client configuration", describes the
// file and where each setting comes from.

// clientConfig is the client configuration file.
type clientConfig struct {
	// Current names the context used when none is asked for.
	Current string `json:"current,omitempty"`
	// Contexts by name.
	Contexts map[string]*clientContext `json:"contexts"`
}

// clientContext is a server and how to reach it.
type clientContext struct {
	// Server is the server's URL, http:// or https://.
	Server string `json:"server"`
	// CACert is the certificate authority (PEM) an https server's
	// certificate is checked against.
	CACert string `json:"ca_cert,omitempty"`
	// TokenFile is a file holding the token, readable by its owner only.
	TokenFile string `json:"token_file,omitempty"`
	// TokenCommand is a command (run with sh -c) that prints the token.
	TokenCommand string `json:"token_command,omitempty"`
	// Data is the data directory of the server when it runs on this
	// machine (for the commands that read it, such as token --direct).
	Data string `json:"data,omitempty"`
}

// contextFields are the fields of a context, for the messages.
var contextFields = []string{"server", "ca_cert", "token_file", "token_command", "data"}

// configPath is where the configuration file is: $GNOMON_CONFIG, else
// $XDG_CONFIG_HOME/gnomon/config.json, else
// $HOME/.config/gnomon/config.json; empty when none of them is set.
func configPath(env *Env) string {
	if p := env.Getenv("GNOMON_CONFIG"); p != "" {
		return p
	}
	if x := env.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "gnomon", "config.json")
	}
	if h := env.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "gnomon", "config.json")
	}
	return ""
}

// configError is a problem of the configuration file, at a line, in a
// field, with what to do about it.
type configError struct {
	file  string
	line  int
	field string
	msg   string
}

func (e *configError) Error() string {
	s := e.file
	if e.line > 0 {
		s += fmt.Sprintf(":%d", e.line)
	}
	if e.field != "" {
		s += ": " + e.field
	}
	return s + ": " + e.msg
}

// loadConfig reads the configuration file at path. A file that does not
// exist is an empty configuration (exists false).
func loadConfig(path string) (cfg *clientConfig, exists bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &clientConfig{Contexts: map[string]*clientContext{}}, false, nil
	}
	if err != nil {
		return nil, false, usageErr("client configuration: %v", err)
	}
	cfg, err = parseConfig(path, b)
	if err != nil {
		return nil, true, &exitError{code: ExitUsage, msg: err.Error()}
	}
	return cfg, true, nil
}

// configReader reads a configuration file with the line of each token,
// for messages that name the line and the field.
type configReader struct {
	file string
	b    []byte
	dec  *json.Decoder
}

// line is the line of the byte at offset.
func (r *configReader) line(offset int64) int {
	offset = min(max(offset, 0), int64(len(r.b)))
	return 1 + bytes.Count(r.b[:offset], []byte{'\n'})
}

func (r *configReader) errorf(field, format string, args ...any) error {
	return &configError{file: r.file, line: r.line(r.dec.InputOffset()), field: field, msg: fmt.Sprintf(format, args...)}
}

// token reads the next token; a syntax error names its line.
func (r *configReader) token(field string) (json.Token, error) {
	t, err := r.dec.Token()
	if err == nil {
		return t, nil
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg := "not valid JSON: " + strings.TrimPrefix(se.Error(), "json: ")
		if strings.Contains(msg, "looking for beginning of object key string") {
			msg += " (a comma after the last member?)"
		}
		return nil, &configError{file: r.file, line: r.line(se.Offset), field: field,
			msg: msg + "; the file is a JSON object (docs/cli.md, \"Client configuration\")"}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, &configError{file: r.file, line: r.line(int64(len(r.b))), field: field,
			msg: "the file ends too soon: a closing } or ] or a value is missing"}
	}
	return nil, r.errorf(field, "%v", err)
}

// kind names a JSON token's type, for the messages.
func kind(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		if v == '[' {
			return "a list"
		}
		return fmt.Sprintf("%q", string(v))
	case string:
		return fmt.Sprintf("the string %q", v)
	case json.Number:
		return "the number " + v.String()
	case bool:
		return fmt.Sprintf("%v", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", t)
}

// object reads an object whose opening brace is next, calling member for
// each key with the decoder before its value.
func (r *configReader) object(field string, member func(key string, line int) error) error {
	t, err := r.token(field)
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return r.errorf(field, "want an object { ... }, got %s", kind(t))
	}
	seen := map[string]bool{}
	for r.dec.More() {
		t, err := r.token(field)
		if err != nil {
			return err
		}
		key := t.(string) // the decoder allows only strings as keys
		line := r.line(r.dec.InputOffset())
		sub := key
		if field != "" {
			sub = field + "." + key
		}
		if seen[key] {
			return &configError{file: r.file, line: line, field: sub, msg: "given twice: keep one"}
		}
		seen[key] = true
		if err := member(key, line); err != nil {
			return err
		}
	}
	_, err = r.token(field) // the closing brace
	return err
}

// str reads a string value.
func (r *configReader) str(field string) (string, error) {
	t, err := r.token(field)
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", r.errorf(field, "want a string in double quotes, got %s", kind(t))
	}
	return s, nil
}

// unknown is the error of a key the file should not have.
func unknown(file string, line int, field, key string, known []string) error {
	msg := fmt.Sprintf("unknown field %q", key)
	if s := suggest.Phrase(suggest.Closest(key, known), nil); s != "" {
		msg += "; " + s
	} else {
		msg += " (the fields are " + strings.Join(known, ", ") + ")"
	}
	return &configError{file: file, line: line, field: field, msg: msg}
}

// parseConfig reads a configuration file's text. Relative paths in it are
// taken from the file's directory. Every error names the file, the line
// and the field, and says what to write instead.
func parseConfig(file string, b []byte) (*clientConfig, error) {
	cfg := &clientConfig{Contexts: map[string]*clientContext{}}
	if len(bytes.TrimSpace(b)) == 0 {
		return cfg, nil
	}
	r := &configReader{file: file, b: b, dec: json.NewDecoder(bytes.NewReader(b))}
	r.dec.UseNumber()
	currentLine := 0
	lines := map[string]int{}
	err := r.object("", func(key string, line int) error {
		switch key {
		case "current":
			s, err := r.str(key)
			cfg.Current, currentLine = s, line
			return err
		case "contexts":
			return r.object(key, func(name string, line int) error {
				field := "contexts." + name
				if err := checkContextName(name); err != nil {
					return &configError{file: file, line: line, field: field, msg: err.Error()}
				}
				c := &clientContext{}
				cfg.Contexts[name], lines[name] = c, line
				return r.object(field, func(key string, line int) error {
					var p *string
					switch key {
					case "server":
						p = &c.Server
					case "ca_cert":
						p = &c.CACert
					case "token_file":
						p = &c.TokenFile
					case "token_command":
						p = &c.TokenCommand
					case "data":
						p = &c.Data
					default:
						return unknown(file, line, field, key, contextFields)
					}
					s, err := r.str(field + "." + key)
					*p = s
					return err
				})
			})
		}
		return unknown(file, line, "", key, []string{"current", "contexts"})
	})
	if err != nil {
		return nil, err
	}
	if t, err := r.dec.Token(); !errors.Is(err, io.EOF) {
		what := "more text"
		if err == nil {
			what = kind(t)
		}
		return nil, &configError{file: file, line: r.line(r.dec.InputOffset()),
			msg: fmt.Sprintf("%s after the closing } of the configuration: the file holds one JSON object", what)}
	}
	names := cfg.names()
	for _, name := range names {
		c := cfg.Contexts[name]
		at := func(field, format string, args ...any) error {
			return &configError{file: file, line: lines[name], field: "contexts." + name + "." + field, msg: fmt.Sprintf(format, args...)}
		}
		if err := checkServer(c.Server); err != nil {
			return nil, at("server", "%v", err)
		}
		if c.TokenFile != "" && c.TokenCommand != "" {
			return nil, at("token_command", "token_file and token_command exclude each other: keep one")
		}
		dir := filepath.Dir(file)
		for _, p := range []*string{&c.CACert, &c.TokenFile, &c.Data} {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(dir, *p)
			}
		}
	}
	if cfg.Current != "" && cfg.Contexts[cfg.Current] == nil {
		return nil, &configError{file: file, line: currentLine, field: "current", msg: noContext(cfg.Current, names)}
	}
	return cfg, nil
}

// checkServer checks a server URL.
func checkServer(s string) error {
	if s == "" {
		return errors.New(`is required: the server's URL, such as "https://sched.example.com:8080"`)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not a server URL: write http://HOST:PORT or https://HOST:PORT", s)
	}
	return nil
}

// checkContextName checks a context's name: printable, no spaces, at most
// 100 characters.
func checkContextName(name string) error {
	if name == "" {
		return errors.New("a context needs a name")
	}
	if len(name) > 100 {
		return fmt.Errorf("the name %.20q... is longer than 100 bytes", name)
	}
	for _, r := range name {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("the name %q has a space or a control character: use letters, digits and . - _ : only", name)
		}
	}
	return nil
}

// noContext says that a context does not exist, with the closest names.
func noContext(name string, names []string) string {
	msg := fmt.Sprintf("no context %q", name)
	if s := suggest.Phrase(suggest.Closest(name, names), nil); s != "" {
		return msg + "; " + s
	}
	if len(names) == 0 {
		return msg + ": none is defined (gnomon login --server URL --token-file FILE defines one)"
	}
	return msg + " (the contexts are " + strings.Join(names, ", ") + ")"
}

// names returns the contexts' names, sorted.
func (c *clientConfig) names() []string {
	out := make([]string, 0, len(c.Contexts))
	for n := range c.Contexts {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// save writes the configuration to path, readable by its owner only,
// replacing the file at once: a reader sees the old file or the new one.
func (c *clientConfig) save(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("client configuration: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".config-*.json")
	if err != nil {
		return fmt.Errorf("client configuration: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("client configuration: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("client configuration: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("client configuration: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("client configuration: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("client configuration: %w", err)
	}
	return nil
}
