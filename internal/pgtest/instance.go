package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Instance is a PostgreSQL server of a test's own, which the test may
// restart or kill without disturbing the machine's server that other
// tests share. Its data directory lies in a temporary directory of the
// test; it listens on a free loopback port and on a Unix socket in that
// directory, trusts every local connection, and keeps fsync on, so that
// what it acknowledged survives a crash of the server.
//
// The postmaster is a child of the test process, which reaps it when it
// stops: one left to an init that does not reap would linger as a zombie,
// and a zombie's PID in postmaster.pid keeps the next postmaster from
// starting. An Instance is not safe for concurrent use.
type Instance struct {
	tb      testing.TB
	bin     string // directory of initdb, pg_ctl and postgres
	dir     string // the test's directory: data/, the socket, postgres.log
	data    string
	port    int
	cred    *syscall.Credential // the server's user, when the test runs as root
	logPath string

	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has been waited for
}

// Start creates a PostgreSQL cluster in a temporary directory of tb,
// starts its server and returns once it accepts connections. The server
// is stopped when the test ends.
//
// The binaries are found with pg_config --bindir, else in the newest
// /usr/lib/postgresql/*/bin. PostgreSQL refuses to run as root: a test
// running as root runs the server as the user postgres. When the binaries
// or that user are missing the test is skipped, but fails when CI is
// "true": CI runs every PostgreSQL test.
func Start(tb testing.TB) *Instance {
	tb.Helper()
	unable := func(format string, args ...any) {
		tb.Helper()
		if os.Getenv("CI") == "true" {
			tb.Fatalf("cannot start a PostgreSQL server of the test's own, and CI runs every PostgreSQL test: "+format, args...)
		}
		tb.Skipf("cannot start a PostgreSQL server of the test's own: "+format, args...)
	}
	bin, err := findBin()
	if err != nil {
		unable("%v", err)
	}
	i := &Instance{tb: tb, bin: bin, dir: tb.TempDir()}
	if os.Geteuid() == 0 {
		cred, err := serverUser("postgres")
		if err != nil {
			unable("%v", err)
		}
		i.cred = cred
		if err := i.grant(); err != nil {
			unable("%v", err)
		}
	}
	if len(i.dir)+len("/.s.PGSQL.65535") > 100 { // sun_path holds 108 bytes
		short, err := os.MkdirTemp("", "pg")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { os.RemoveAll(short) })
		i.dir = short
		if err := i.grant(); err != nil {
			unable("%v", err)
		}
	}
	i.data = filepath.Join(i.dir, "data")
	i.logPath = filepath.Join(i.dir, "postgres.log")
	// --no-sync only skips initdb's own flush of the new cluster; the
	// server runs with fsync on.
	if out, err := i.run(filepath.Join(bin, "initdb"), "-D", i.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		unable("initdb: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		tb.Fatal(err)
	}
	i.port = port
	conf := fmt.Sprintf(`
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
fsync = on
synchronous_commit = on
full_page_writes = on
max_connections = 40
shared_buffers = 16MB
logging_collector = off
`, port, i.dir)
	f, err := os.OpenFile(filepath.Join(i.data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(i.Stop)
	i.start()
	return i
}

// URL returns the URL of the database postgres of the server.
func (i *Instance) URL() string {
	return i.DBURL("postgres")
}

// DBURL returns the URL of a database of the server.
func (i *Instance) DBURL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(i.port)),
		Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// Restart stops the server as pg_ctl stop does in mode ("fast": every
// session is ended and the server shuts down cleanly; "immediate": the
// server quits without a checkpoint and recovers from its WAL when it
// starts), leaves it down for the duration down, then starts it again, as
// pg_ctl restart -m mode does. It returns once the server accepts
// connections again.
func (i *Instance) Restart(mode string, down time.Duration) {
	i.tb.Helper()
	if err := i.shutdown(mode); err != nil {
		i.tb.Fatalf("restart -m %s: %v\n%s", mode, err, i.logTail())
	}
	time.Sleep(down)
	i.start()
}

// Kill kills the postmaster with SIGKILL, as a crash would, leaves the
// server down for the duration down, and starts it again on the same data
// directory once the sessions the postmaster left have gone. It returns
// once the server, recovered from its WAL, accepts connections.
func (i *Instance) Kill(down time.Duration) {
	i.tb.Helper()
	if i.cmd == nil {
		i.tb.Fatal("kill: the server is not running")
	}
	i.cmd.Process.Signal(syscall.SIGKILL)
	<-i.exited
	i.cmd = nil
	time.Sleep(down)
	i.start()
}

// Stop shuts the server down (again harmlessly). It is called when the
// test ends.
func (i *Instance) Stop() {
	if i.cmd == nil {
		return
	}
	if err := i.shutdown("fast"); err != nil {
		i.tb.Logf("stop the PostgreSQL server: %v", err)
	}
}

// shutdown stops the server with pg_ctl stop -m mode and waits for the
// postmaster to exit; when pg_ctl fails, the postmaster is killed.
func (i *Instance) shutdown(mode string) error {
	if i.cmd == nil {
		return errors.New("the server is not running")
	}
	defer func() { i.cmd = nil }()
	out, err := i.run(filepath.Join(i.bin, "pg_ctl"), "stop", "-D", i.data, "-m", mode, "-w", "-t", "60")
	if err != nil {
		i.cmd.Process.Signal(syscall.SIGKILL)
		<-i.exited
		return fmt.Errorf("pg_ctl stop -m %s: %v\n%s", mode, err, out)
	}
	select {
	case <-i.exited:
		return nil
	case <-time.After(30 * time.Second):
		i.cmd.Process.Signal(syscall.SIGKILL)
		<-i.exited
		return fmt.Errorf("pg_ctl stop -m %s: the postmaster did not exit", mode)
	}
}

// start starts the postmaster and waits until it accepts connections. A
// postmaster that exits at once (its orphaned sessions of a killed
// predecessor still hold the shared memory, say) is started again, for up
// to a minute.
func (i *Instance) start() {
	i.tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		err := i.launch(deadline)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			i.tb.Fatalf("start PostgreSQL on %s: %v\n%s", i.data, err, i.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// launch starts one postmaster and waits until it accepts connections,
// exits, or the deadline passes (then it is killed).
func (i *Instance) launch(deadline time.Time) error {
	logf, err := os.OpenFile(i.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd := i.command(filepath.Join(i.bin, "postgres"), "-D", i.data)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, i.URL())
		if err == nil {
			conn.Close(ctx)
			cancel()
			i.cmd, i.exited = cmd, exited
			return nil
		}
		cancel()
		select {
		case <-exited:
			return fmt.Errorf("postgres exited: %v", cmd.ProcessState)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Signal(syscall.SIGKILL)
			<-exited
			return fmt.Errorf("postgres does not accept connections: %w", err)
		}
	}
}

// command prepares a PostgreSQL program to run as the server's user, in
// the test's directory, without the PG* variables of the environment.
func (i *Instance) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = i.dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "HOME=" + i.dir}
	if i.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: i.cred}
	}
	return cmd
}

// run runs a PostgreSQL program to completion and returns its output.
func (i *Instance) run(name string, args ...string) ([]byte, error) {
	return i.command(name, args...).CombinedOutput()
}

// grant gives the directory to the server's user, and lets that user
// reach it through the test's temporary directories (created 0700).
func (i *Instance) grant() error {
	if i.cred == nil {
		return nil
	}
	if err := os.Chown(i.dir, int(i.cred.Uid), int(i.cred.Gid)); err != nil {
		return err
	}
	tmp := filepath.Clean(os.TempDir())
	for p := filepath.Dir(i.dir); strings.HasPrefix(p, tmp+string(filepath.Separator)); p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(p, fi.Mode().Perm()|0o001); err != nil {
				return err
			}
		}
	}
	return nil
}

// logTail returns the end of the server's log, for failures.
func (i *Instance) logTail() string {
	b, _ := os.ReadFile(i.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// findBin returns the directory of the PostgreSQL server's programs.
func findBin() (string, error) {
	has := func(dir string) bool {
		for _, p := range []string{"initdb", "pg_ctl", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, p)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); has(dir) {
			return dir, nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	version := func(dir string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
		return n
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, dir := range dirs {
		if has(dir) {
			return dir, nil
		}
	}
	return "", errors.New("no initdb, pg_ctl and postgres found (pg_config --bindir, /usr/lib/postgresql/*/bin)")
}

// serverUser returns the credential of the user the server runs as.
func serverUser(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("the server runs as the user %s when the test runs as root: %w", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %w", name, u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// freePort returns a loopback TCP port no one listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
