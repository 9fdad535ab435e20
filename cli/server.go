package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gnomon-sched/gnomon"
	"github.com/gnomon-sched/gnomon/auth"
	"github.com/gnomon-sched/gnomon/calendar"
	"github.com/gnomon-sched/gnomon/clock"
	"github.com/gnomon-sched/gnomon/cluster"
	"github.com/gnomon-sched/gnomon/defs"
	"github.com/gnomon-sched/gnomon/engine"
	"github.com/gnomon-sched/gnomon/internal/connlimit"
	"github.com/gnomon-sched/gnomon/internal/gcfloor"
	"github.com/gnomon-sched/gnomon/internal/secret"
	"github.com/gnomon-sched/gnomon/internal/startstop"
	"github.com/gnomon-sched/gnomon/notify"
	"github.com/gnomon-sched/gnomon/web"
)

// Version is gnomon's version.
const Version = "0.1.0-dev"

// ServerConfig configures a server.
type ServerConfig struct {
	Data        string // data directory
	Listen      string // address to listen on
	DB          string // database: a SQLite file path; empty means Data/gnomon.db
	Definitions string // a file or directory applied before listening
	Timezone    string // IANA zone; empty means the host's
	// LogRoots are where the log files of tasks may be (see
	// gnomon.Config.LogRoots); empty means Data/logs and the system's
	// temporary directory.
	LogRoots []string
	// DefaultOwner is whom the commands of tasks without an owner run as
	// (gnomon.Config.DefaultOwner); empty means the server's own user.
	DefaultOwner string
	// SimulateFrom starts a virtual clock at this instant (RFC 3339 or a
	// local date and time); empty means the real clock.
	SimulateFrom string
	Workers      int           // concurrent runs
	Grace        time.Duration // between TERM and KILL when a run is aborted
	Drain        time.Duration // how long SIGTERM waits for running commands
	// EventLateness bounds how late a data event may be (see
	// engine.Config); zero means the default, negative no limit.
	EventLateness time.Duration
	// MaxFutureSkew, when positive, refuses data events stamped further
	// ahead of the server's clock.
	MaxFutureSkew time.Duration
	// SMTP sends email alerts when SMTP.Addr is set; Username comes from
	// $GNOMON_SMTP_USERNAME, Password from $GNOMON_SMTP_PASSWORD or the
	// file --smtp-password-file names.
	SMTP notify.Config
	// RetryAlertsFor bounds how long an alert is retried; zero means 24h.
	RetryAlertsFor time.Duration
	// WebhookSecret keys the signature of generic webhook alerts; read
	// from --webhook-secret-file or $GNOMON_WEBHOOK_SECRET_FILE.
	WebhookSecret []byte
	// PagerDutyURL overrides where PagerDuty events go
	// (--pagerduty-url).
	PagerDutyURL string
	Logger       *slog.Logger
	// SupervisorCommand overrides how run supervisors are started (tests).
	SupervisorCommand []string
	// TuneGC collects less often while the state loads, and returns the
	// garbage of loading to the system after it.
	TuneGC bool
	// Cluster, when set, makes the server a node of a cluster on its
	// PostgreSQL database, with the roles it names.
	Cluster *gnomon.Cluster
	// PublicNames are the host names clients reach the server by, besides
	// localhost and its addresses (see api.Access).
	PublicNames []string
	// TokenRate is the requests a second of a token without a rate of its
	// own; 0 means no limit.
	TokenRate int
	// TLSCert and TLSKey are the server's certificate and key files;
	// TLSSelfSigned makes (once) and uses a certificate of its own in the
	// data directory instead. TLSClientCA verifies client certificates,
	// which identify the token whose ID they name (auth.Authority.Certificate).
	TLSCert, TLSKey string
	TLSSelfSigned   bool
	TLSClientCA     string
	// InsecureListen allows plain HTTP on an address beyond loopback.
	InsecureListen bool
	// MetricsPublic serves /metrics without a token.
	MetricsPublic bool
	// Standby makes a director that another director keeps from starting
	// wait as its standby (gnomon.Standby) instead of failing.
	Standby bool
	// MaxConnections caps the client connections open at once; 0 means
	// the file descriptor limit less a reserve (connlimit.DefaultMax).
	MaxConnections int
	// LiveStreams caps the web UI's streams of change notices each token
	// holds at once; 0 means web.DefaultLiveStreams.
	LiveStreams int
	// Retention is how long records are kept (gnomon.Config.Retention).
	Retention gnomon.Retention
	// LogRotation bounds the log files of tasks (gnomon.Config.LogRotation).
	LogRotation gnomon.LogRotation
}

// Server is a gnomon server: the library's Scheduler, with its HTTP API on
// a listener. NewServer makes one; Start starts it once, and Stop stops
// it (see the methods for what each may be called on).
type Server struct {
	cfg   ServerConfig
	sched *gnomon.Scheduler
	http  *http.Server
	ln    net.Listener
	// conns caps the connections under ln (TLS is above it).
	conns *connlimit.Listener
	errc  chan error
	// draining is set while Stop drains: reads are answered, changes are
	// refused with 503.
	draining atomic.Bool
	// stopNode ends a node that is no director (sched is nil then), or a
	// standby's wait (sched is set once it took the cluster over).
	stopNode func() error
	// active delivers the scheduler of a standby that took the cluster
	// over and is ready.
	active chan *gnomon.Scheduler
	// lock holds the data directory's lock.
	lock *os.File
	life startstop.Guard
	// failed is set when Start failed: it closed what it opened.
	failed bool
}

// NewServer returns the server cfg describes, not started.
func NewServer(cfg ServerConfig) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	return &Server{cfg: cfg, errc: make(chan error, 1)}
}

// Start takes the data directory's lock (see lockData) until Stop,
// assembles the scheduler (gnomon.New), loads its state, applies the
// definitions and starts listening. It returns once /healthz would
// answer. A server starts once: a second Start, or one after Stop, is
// refused. What a failed Start opened it closes.
func (s *Server) Start(ctx context.Context) error {
	return s.life.Start(ctx, "server", "cli.NewServer", func() error {
		lock, err := lockData(s.cfg.Data)
		if err == nil {
			if err = s.start(ctx); err != nil {
				lock.Close()
			}
		}
		if err != nil {
			s.failed = true
			return err
		}
		s.lock = lock
		return nil
	})
}

// start is Start's work once the data directory is locked.
func (s *Server) start(ctx context.Context) error {
	cfg := &s.cfg
	loc, err := zoneFlag(cfg.Timezone, os.Getenv)
	if err != nil {
		return err
	}
	lc := gnomon.Config{
		DataDir: cfg.Data, Location: loc, Workers: cfg.Workers, KillGrace: cfg.Grace, RetryAlertsFor: cfg.RetryAlertsFor,
		EventLateness: cfg.EventLateness, Supervisor: cfg.SupervisorCommand, Logger: cfg.Logger, LogRoots: cfg.LogRoots,
		DefaultOwner: cfg.DefaultOwner, WebhookSecret: cfg.WebhookSecret, PagerDutyURL: cfg.PagerDutyURL, Retention: cfg.Retention, LogRotation: cfg.LogRotation,
	}
	if cfg.SimulateFrom != "" {
		if lc.SimulateFrom, err = calendar.ParseInstant(cfg.SimulateFrom, loc); err != nil {
			return usageErr("--simulate-from: %v", err)
		}
	}
	if cfg.SMTP.Addr != "" {
		lc.SMTP = &gnomon.SMTP{Addr: cfg.SMTP.Addr, From: cfg.SMTP.From, Subject: cfg.SMTP.Subject, TLS: cfg.SMTP.TLS,
			Username: cfg.SMTP.Username, Password: cfg.SMTP.Password}
		// Checked here, to be refused as a usage error.
		if _, err := notify.New(notify.Config{Addr: lc.SMTP.Addr, From: lc.SMTP.From, Subject: lc.SMTP.Subject, TLS: lc.SMTP.TLS}); err != nil {
			return usageErr("--smtp-*: %v", err)
		}
	}
	if err := os.MkdirAll(cfg.Data, 0o700); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if lc.Store, err = gnomon.OpenStore(ctx, cfg.DB, cfg.Data); err != nil {
		return fmt.Errorf("--db: %w", err)
	}
	if cfg.Cluster != nil {
		if cfg.Cluster.Address == "" {
			cfg.Cluster.Address = cfg.Listen
		}
		cfg.Cluster.Version = Version
		lc.Cluster = cfg.Cluster
		if !slices.Contains(cfg.Cluster.Roles, "director") {
			return s.startNode(ctx, lc)
		}
	}
	if s.sched, err = load(lc, cfg.TuneGC); err != nil {
		if cfg.Standby && errors.Is(err, cluster.ErrOtherDirector) {
			// New closed the store.
			if lc.Store, err = gnomon.OpenStore(ctx, cfg.DB, cfg.Data); err != nil {
				return fmt.Errorf("--db: %w", err)
			}
			return s.startStandby(ctx, lc)
		}
		return err
	}
	if err := s.direct(ctx); err != nil {
		return err
	}
	certHosts, err := s.listen()
	if err != nil {
		s.sched.Stop(ctx)
		return err
	}
	s.http = &http.Server{Handler: s.drainable(s.api(certHosts))}
	s.serve()
	s.ready(lc)
	return nil
}

// direct starts the scheduler, applies --definitions and makes the first
// admin token: what a server that directs does before it answers. The
// scheduler is stopped when one fails.
func (s *Server) direct(ctx context.Context) error {
	err := s.sched.Start(ctx)
	if err == nil {
		err = s.applyDefinitions(ctx)
	}
	if err == nil {
		err = s.bootstrapToken(ctx, s.sched.Store())
	}
	if err != nil {
		s.sched.Stop(ctx)
	}
	return err
}

// listen opens the server's listener, over TLS when configured, and
// returns the host names of its certificate.
func (s *Server) listen() ([]string, error) {
	tc, certHosts, err := s.serverTLS()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.conns = s.limitConnections(ln)
	ln = s.conns
	if tc != nil {
		ln = tls.NewListener(ln, tc)
	}
	s.ln = ln
	return certHosts, nil
}

// limitConnections caps the connections of ln below the process's file
// descriptor limit, raised first to its hard limit: a flood of clients
// must leave descriptors for the runs and the store (see connlimit).
func (s *Server) limitConnections(ln net.Listener) *connlimit.Listener {
	log := s.cfg.Logger
	limit, err := connlimit.RaiseFileLimit()
	if err != nil {
		log.Warn("the limit on open files could not be raised to its hard limit", "limit", limit, "err", err)
	}
	max := s.cfg.MaxConnections
	if max <= 0 {
		max = connlimit.DefaultMax(limit)
	} else if uint64(max) > limit {
		log.Warn("--max-connections is above the limit on open files: a flood of clients can leave runs without descriptors", "max_connections", max, "limit", limit)
	}
	l := connlimit.New(ln, max)
	var every connlimit.Every
	every.Period = time.Minute
	l.Full = func(closed bool) {
		if every.Allow(clock.Wall.Now()) {
			what := "every connection is busy: new ones wait"
			if closed {
				what = "the longest idle connection is closed for a new one"
			}
			log.Warn("connection cap reached: "+what+" (logged once a minute)", "max_connections", max)
		}
	}
	log.Info("connections capped below the limit on open files", "max_connections", max, "open_files_limit", limit)
	return l
}

// api is the scheduler's HTTP API.
func (s *Server) api(certHosts []string) http.Handler {
	cfg := s.cfg
	return s.sched.Handler(gnomon.HandlerConfig{Version: Version, MaxFutureSkew: cfg.MaxFutureSkew,
		Hosts: append(slices.Clone(cfg.PublicNames), certHosts...), TokenRate: cfg.TokenRate, MetricsPublic: cfg.MetricsPublic,
		LiveStreams: cfg.LiveStreams})
}

// serve serves s.http on the listener.
func (s *Server) serve() {
	s.http.Handler = hsts(s.http.Handler)
	s.limitClients(s.http)
	s.http.ErrorLog = slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn)
	go func() { s.errc <- s.http.Serve(s.ln) }()
}

// ready logs that the server directs and answers.
func (s *Server) ready(lc gnomon.Config) {
	clock := "real"
	if !lc.SimulateFrom.IsZero() {
		now := s.sched.Now()
		clock = "simulated, reading " + now.UTC().Format(time.RFC3339)
		if now.After(lc.SimulateFrom) {
			// A virtual clock never goes back: one the data directory
			// recorded resumes where it was.
			s.cfg.Logger.Warn("--simulate-from is before the virtual clock this server recorded: the clock resumes where it stopped, not at --simulate-from",
				"simulate_from", lc.SimulateFrom.UTC().Format(time.RFC3339), "clock", now.UTC().Format(time.RFC3339),
				"fix", "to simulate from an earlier instant, start on a new data directory (--data) or an empty database (--db)")
		}
	}
	db := s.cfg.DB
	if db == "" {
		db = filepath.Join(s.cfg.Data, "gnomon.db")
	}
	s.cfg.Logger.Info("gnomon server ready", "listen", s.ln.Addr().String(), "data", s.cfg.Data, "db", db,
		"timezone", lc.Location.String(), "clock", clock)
}

// startStandby starts a director that another director keeps from
// starting as its standby: it plays the node's other roles, answers
// /healthz and every request with 503 naming the director, and once it
// takes the cluster over it directs, and answers, as a server does.
func (s *Server) startStandby(ctx context.Context, lc gnomon.Config) error {
	sb, err := gnomon.NewStandby(ctx, lc)
	if err != nil {
		return err
	}
	certHosts, err := s.listen()
	if err != nil {
		lc.Store.Close()
		return err
	}
	var handler atomic.Pointer[http.Handler]
	waiting := standbyHandler(lc.Cluster.Node, sb)
	handler.Store(&waiting)
	s.http = &http.Server{Handler: s.drainable(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*handler.Load()).ServeHTTP(w, r)
	}))}
	s.serve()
	s.active = make(chan *gnomon.Scheduler, 1)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	// ended ends the server, unless it is stopping already.
	ended := func(err error) {
		select {
		case s.errc <- err:
		default:
		}
	}
	go func() {
		sched, err := sb.Wait(wctx)
		if sched == nil {
			done <- err
			ended(err) // nil: stopped, or drained
			return
		}
		s.sched = sched
		if err := s.direct(context.WithoutCancel(ctx)); err != nil {
			done <- nil
			ended(err)
			return
		}
		h := s.api(certHosts)
		handler.Store(&h)
		s.ready(lc)
		done <- nil
		s.active <- sched
	}()
	s.stopNode = func() error { cancel(); return <-done }
	s.cfg.Logger.Info("gnomon standby ready: it directs once it takes the cluster over", "listen", s.ln.Addr().String(),
		"node", lc.Cluster.Node, "roles", lc.Cluster.Roles, "db", s.cfg.DB)
	return nil
}

// standbyRetry is the Retry-After of a request a standby refuses, in
// seconds.
const standbyRetry = "5"

// standbyHandler answers for a standby: 503 to every request, /healthz
// included (a balancer sends nothing to it), naming the director.
func standbyHandler(node string, sb *gnomon.Standby) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, err := sb.Director(r.Context())
		director := d.ID
		switch {
		case err != nil:
			director = "unknown (" + err.Error() + ")"
		case director == "":
			director = "none yet"
		case d.Address != "":
			director += " at " + d.Address
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", standbyRetry)
		w.WriteHeader(http.StatusServiceUnavailable)
		body := map[string]string{"status": "standby", "node": node, "director": d.ID,
			"error": fmt.Sprintf("standby: node %s directs nothing until it takes the cluster over; the cluster's director is %s: send operator commands to it", node, director)}
		json.NewEncoder(w).Encode(body)
	})
}

// bootstrapToken makes the first admin token of a store that has none and
// writes it to the data directory, where the command line on this machine
// finds it.
func (s *Server) bootstrapToken(ctx context.Context, st gnomon.Store) error {
	path := filepath.Join(s.cfg.Data, auth.AdminTokenFile)
	made, err := auth.Bootstrap(ctx, st, path, clock.Wall.Now()) // tokens live in real time
	if err != nil {
		return fmt.Errorf("admin token: %w", err)
	}
	if made {
		s.cfg.Logger.Info("admin token written: the command line on this machine reads it; give others tokens of their own (gnomon token create)", "file", path)
	}
	return nil
}

// load assembles the scheduler and loads its state. Loading allocates the
// whole state at once: with tune, the collector runs less often meanwhile,
// and the garbage of loading is given back to the system before the server
// says it is ready.
func load(lc gnomon.Config, tune bool) (*gnomon.Scheduler, error) {
	if tune {
		defer debug.FreeOSMemory()
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	return gnomon.New(lc)
}

// applyDefinitions applies --definitions: one file, or every *.def file of a
// directory in name order, each all or nothing. Inserts of tasks that
// already exist replace them, so the same files apply at every start.
func (s *Server) applyDefinitions(ctx context.Context) error {
	if s.cfg.Definitions == "" {
		return nil
	}
	files := []string{s.cfg.Definitions}
	if st, err := os.Stat(s.cfg.Definitions); err != nil {
		return usageErr("--definitions: %v", err)
	} else if st.IsDir() {
		files, _ = filepath.Glob(filepath.Join(s.cfg.Definitions, "*.def"))
		js, _ := filepath.Glob(filepath.Join(s.cfg.Definitions, "*.json"))
		files = append(files, js...)
		slices.Sort(files)
		if len(files) == 0 {
			return usageErr("--definitions: no *.def or *.json files in %s", s.cfg.Definitions)
		}
	}
	for _, f := range files {
		text, err := readDefinitions(f)
		if err != nil {
			return err
		}
		// The .ics files its calendars name are read now, from beside it:
		// the calendars hold their dates.
		var warnings []string
		if text, warnings, err = defs.ResolveICSWarnings(f, text, icsReader(f), s.sched.Now()); err != nil {
			return fmt.Errorf("--definitions: %w", err)
		}
		for _, w := range warnings {
			s.cfg.Logger.Warn("--definitions: "+w, "file", f)
		}
		if err := s.sched.Declare(ctx, f, text); err != nil {
			return fmt.Errorf("--definitions: %w", err)
		}
		s.cfg.Logger.Info("definitions applied", "file", f)
	}
	return nil
}

// startNode starts a node that is not a director: it answers only
// /healthz, over TLS as a director would (a listener beyond this machine
// needs it); operators talk to a director.
func (s *Server) startNode(ctx context.Context, lc gnomon.Config) error {
	if _, err := s.listen(); err != nil {
		lc.Store.Close()
		return err
	}
	nctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() {
		err := gnomon.RunNode(nctx, lc)
		done <- errors.Join(err, lc.Store.Close())
		select {
		case s.errc <- nil: // drained: the server exits
		default:
		}
	}()
	s.stopNode = func() error { cancel(); return <-done }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"status\":\"ok\",\"version\":%q,\"node\":%q,\"roles\":%q}\n", Version, lc.Cluster.Node, strings.Join(lc.Cluster.Roles, ","))
	})
	s.http = &http.Server{Handler: hsts(mux)}
	s.limitClients(s.http)
	go func() { s.errc <- s.http.Serve(s.ln) }()
	s.cfg.Logger.Info("gnomon node ready", "listen", s.ln.Addr().String(), "node", lc.Cluster.Node, "roles", lc.Cluster.Roles, "db", s.cfg.DB)
	return nil
}

// The bounds of a client's connection: a client slower than these, or
// sending more headers, is cut off, so that slow clients cannot hold the
// server's connections (request bodies are bounded by the API itself).
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second // the whole request, body included
	writeTimeout      = 5 * time.Minute  // a long answer, such as moving a simulated clock far
	idleTimeout       = 2 * time.Minute  // between requests on a kept-alive connection
	maxHeaderBytes    = 64 << 10
)

func (s *Server) limitClients(h *http.Server) {
	h.ReadHeaderTimeout, h.ReadTimeout, h.WriteTimeout, h.IdleTimeout = readHeaderTimeout, readTimeout, writeTimeout, idleTimeout
	h.MaxHeaderBytes = maxHeaderBytes
	if s.conns != nil {
		s.conns.Serve(h)
	}
}

// Addr returns the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Scheduler returns the server's scheduler.
func (s *Server) Scheduler() *gnomon.Scheduler { return s.sched }

// Wait blocks until the HTTP server or the scheduler fails, or the node
// that does not direct stops.
func (s *Server) Wait(ctx context.Context) error {
	sched := s.sched
	for {
		var halted <-chan struct{}
		if sched != nil {
			halted = sched.Done()
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-s.errc:
			return err
		case sched = <-s.active:
		case <-halted:
			return sched.Stop(context.Background())
		}
	}
}

// drainRetry is the Retry-After of a change refused while the server
// drains, in seconds.
const drainRetry = "5"

// drainable answers as h does, but while the server drains it refuses
// every change (any method but GET and HEAD) with 503 and Retry-After, and
// /healthz says it is draining (503) so that a balancer stops sending it
// work; reads are answered until the drain ends.
func (s *Server) drainable(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.draining.Load() {
			h.ServeHTTP(w, r)
			return
		}
		status, body := 0, ""
		switch {
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			status, body = http.StatusServiceUnavailable, `{"error":"the server is stopping: changes are refused while it drains its running commands"}`
		case r.URL.Path == "/healthz":
			status, body = http.StatusServiceUnavailable, `{"status":"draining"}`
		default:
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", drainRetry)
		w.WriteHeader(status)
		io.WriteString(w, body+"\n")
	})
}

// Stop drains the scheduler: no new run starts, running commands get until
// ctx is done (those still running are re-attached at the next start).
// Meanwhile the server answers reads and refuses changes with 503. Then it
// stops listening and closes the store. Only the first Stop of a server
// whose Start succeeded does this: another, or one of a server never
// started or whose Start failed, returns nil at once.
func (s *Server) Stop(ctx context.Context) error {
	if started, first := s.life.Stop(); !started || !first || s.failed {
		return nil
	}
	s.draining.Store(true)
	var serr error
	if s.stopNode != nil {
		serr = s.stopNode()
	}
	if s.sched != nil {
		serr = errors.Join(serr, s.sched.Stop(ctx))
	}
	hctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	serr = errors.Join(serr, s.http.Shutdown(hctx))
	if s.lock != nil {
		s.lock.Close()
		s.lock = nil
	}
	return serr
}

func serverCmd(env *Env) *cobra.Command {
	var heapFloor int
	var smtpPasswordFile, webhookSecretFile string
	var cfg ServerConfig
	c := &cobra.Command{
		Use:   "server",
		Short: "run the scheduler",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Data == "" {
				cfg.Data = env.Getenv("GNOMON_DATA")
			}
			if cfg.Data == "" {
				cfg.Data = "gnomon-data"
			}
			if cfg.DB == "" {
				cfg.DB = env.Getenv("GNOMON_DB")
			}
			if len(cfg.LogRoots) == 0 {
				cfg.LogRoots = filepath.SplitList(env.Getenv("GNOMON_LOG_ROOT"))
			}
			if cfg.DefaultOwner == "" {
				cfg.DefaultOwner = env.Getenv("GNOMON_DEFAULT_OWNER")
			}
			cfg.Logger = slog.New(slog.NewTextHandler(env.Stderr, nil))
			cfg.SMTP.Username, cfg.SMTP.Password = env.Getenv("GNOMON_SMTP_USERNAME"), env.Getenv("GNOMON_SMTP_PASSWORD")
			if smtpPasswordFile == "" {
				smtpPasswordFile = env.Getenv("GNOMON_SMTP_PASSWORD_FILE")
			}
			if smtpPasswordFile != "" {
				if cfg.SMTP.Password != "" {
					return usageErr("--smtp-password-file: the password is in $GNOMON_SMTP_PASSWORD already: give one of them")
				}
				pw, err := secret.Read(smtpPasswordFile)
				if err != nil {
					return usageErr("--smtp-password-file: %v", err)
				}
				cfg.SMTP.Password = pw
			}
			if err := webhookSecret(&cfg, env, webhookSecretFile); err != nil {
				return err
			}
			if cfg.SMTP.Addr == "" && (cfg.SMTP.From != "" || cfg.SMTP.Username != "") {
				return usageErr("--smtp-addr is required to send alerts")
			}
			if cfg.MaxConnections < 0 {
				return usageErr("--max-connections: %d is negative (0: the default)", cfg.MaxConnections)
			}
			if cfg.LiveStreams < 0 {
				return usageErr("--live-streams: %d is negative (0: the default, %d)", cfg.LiveStreams, web.DefaultLiveStreams)
			}
			if heapFloor < 0 || heapFloor > 1<<20 {
				return usageErr("--heap-floor: %d MiB is not between 0 and 1048576", heapFloor)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			cfg.TuneGC = heapFloor > 0
			s := NewServer(cfg)
			if err := s.Start(ctx); err != nil {
				return err
			}
			// Once the state is loaded (with GOGC of its own).
			defer gcfloor.Start(uint64(heapFloor) << 20)()
			werr := s.Wait(ctx)
			cfg.Logger.Info("stopping: no new runs; waiting for running commands", "grace", cfg.Drain)
			sctx, cancel := context.WithTimeout(context.Background(), cfg.Drain)
			defer cancel()
			return errors.Join(werr, s.Stop(sctx))
		},
	}
	f := c.Flags()
	f.IntVar(&heapFloor, "heap-floor", 64, "MiB the heap may grow above what is live before a garbage collection, whatever GOGC, and collect less often while the state loads; 0 leaves it to GOGC")
	f.StringVar(&cfg.Data, "data", "", "data directory (default $GNOMON_DATA or ./gnomon-data)")
	f.StringVar(&cfg.Listen, "listen", "127.0.0.1:8080", "address to listen on")
	f.StringVar(&cfg.DB, "db", "", "database: postgres://USER@HOST:PORT/DB, or sqlite:PATH (default $GNOMON_DB, else the SQLite file gnomon.db in the data directory)")
	f.StringVar(&cfg.Definitions, "definitions", "", "definition file, or directory of *.def and *.json files, to apply before listening")
	f.StringArrayVar(&cfg.LogRoots, "log-root", nil, "directory where the log files of tasks may be, repeatable; a relative out_log_file or err_log_file is taken from the first (default $GNOMON_LOG_ROOT, a colon-separated list, else DATA/logs and the system's temporary directory, where a run writes only to files of its own user)")
	f.StringVar(&cfg.DefaultOwner, "default-owner", "", "OS user (USER or USER:GROUP) the commands of tasks without an owner run as; default $GNOMON_DEFAULT_OWNER, else the server's own user (see docs/security.md: a server running as root should name an unprivileged user)")
	f.StringVar(&cfg.Timezone, "timezone", "", "IANA time zone of calendars and displayed times (default the host's)")
	f.StringVar(&cfg.SimulateFrom, "simulate-from", "", "run on a virtual clock starting at this instant, moved only by 'gnomon clock advance' (commands still run)")
	f.IntVar(&cfg.Workers, "workers", 10, "most runs at once (of a cluster: a director's in the whole cluster, a worker's on its node)")
	f.DurationVar(&cfg.Grace, "kill-grace", 10*time.Second, "time between TERM and KILL when a run is aborted or reaches its term_run_time")
	f.DurationVar(&cfg.Drain, "shutdown-grace", 30*time.Second, "on SIGTERM, how long running commands may finish before the server exits (they keep running and are re-attached at the next start)")
	f.StringVar(&cfg.SMTP.Addr, "smtp-addr", "", "SMTP server (host:port) that email alerts go through (default: alerts are recorded, not sent)")
	f.StringVar(&cfg.SMTP.From, "smtp-from", "", "sender address of email alerts")
	f.StringVar(&cfg.PagerDutyURL, "pagerduty-url", "", "where the events of notify: pagerduty:@file:PATH targets are posted (default PagerDuty's Events API v2, https://events.pagerduty.com/v2/enqueue)")
	f.StringVar(&webhookSecretFile, "webhook-secret-file", "", "file holding the secret that signs generic webhook alerts (X-Gnomon-Signature), readable by its owner only (default $GNOMON_WEBHOOK_SECRET_FILE)")
	f.StringVar(&smtpPasswordFile, "smtp-password-file", "", "file holding the SMTP password, readable by its owner only (default $GNOMON_SMTP_PASSWORD_FILE; or the password in $GNOMON_SMTP_PASSWORD, the user in $GNOMON_SMTP_USERNAME)")
	f.StringVar(&cfg.SMTP.Subject, "smtp-subject", notify.DefaultSubject, "subject of email alerts (a Go text/template with the alert's fields)")
	f.StringVar(&cfg.SMTP.TLS, "smtp-tls", notify.TLSOpportunistic, "STARTTLS policy: opportunistic (when the server offers it), mandatory or none")
	f.DurationVar(&cfg.RetryAlertsFor, "alert-retry-for", 24*time.Hour, "how long an alert the SMTP server does not take is retried (with backoff up to 5m)")
	var lateness time.Duration
	f.DurationVar(&lateness, "event-lateness", engine.DefaultEventLateness, "how much older than the newest event a configuration has accepted a data event may be and still count (0: no limit, memory grows with every event kept)")
	f.DurationVar(&cfg.MaxFutureSkew, "max-future-skew", 0, "refuse (422) data events stamped further than this ahead of the server's clock (0: accept, with a warning beyond 5m)")
	f.StringSliceVar(&cfg.PublicNames, "public-name", nil, "host names clients reach the server by, besides localhost and its IP addresses; requests naming other hosts are refused (repeatable)")
	f.StringVar(&cfg.TLSCert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	f.StringVar(&cfg.TLSKey, "tls-key", "", "the key of --tls-cert (PEM)")
	f.BoolVar(&cfg.TLSSelfSigned, "tls-self-signed", false, "serve HTTPS with a self-signed certificate made once in DATA/tls (its fingerprint is logged)")
	f.StringVar(&cfg.TLSClientCA, "tls-client-ca", "", "verify client certificates against these CA certificates (PEM); a verified certificate identifies the token whose ID it names, as the URI urn:gnomon:token:ID or as its common name")
	f.BoolVar(&cfg.InsecureListen, "insecure-listen", false, "allow plain HTTP on an address beyond loopback, for a network you trust (warned at every start)")
	f.BoolVar(&cfg.MetricsPublic, "metrics-public", false, "serve the Prometheus metrics at /metrics without a token (they name no task); a token with the read permission otherwise")
	f.IntVar(&cfg.MaxConnections, "max-connections", 0, "most client connections open at once; at the cap the longest idle one is closed for a new one (default: the limit on open files, raised to its hard limit, less a quarter of it and at least 256 kept for runs and the store)")
	f.IntVar(&cfg.LiveStreams, "live-streams", 0, "most streams of the web UI's change notices (one per open page) a token holds at once; the next gets 429 (default 16)")
	f.Var(retentionFlag{&cfg.Retention}, "retention", retentionUsage)
	f.Var(sizeFlag{&cfg.LogRotation.Size}, "log-rotate-size", "rotate a task's log file when a run starts and it holds this much (64M, 1G; K, M, G are powers of 1024), unless a run writes to it: FILE becomes FILE.1, FILE.1 FILE.2, up to --log-keep files (default 0: never)")
	f.Var(ageFlag{&cfg.LogRotation.Age}, "log-rotate-age", "rotate a task's log file when a run starts and its oldest content is this old (7d, 2w, 24h), unless a run writes to it; with --log-rotate-size, either rotates (default 0: never)")
	f.IntVar(&cfg.LogRotation.Keep, "log-keep", 5, "rotated log files kept per log file (FILE.1 to FILE.N), with --log-rotate-size or --log-rotate-age")
	f.IntVar(&cfg.TokenRate, "token-rate", 100, "requests a second a token may make unless it has a rate of its own (0: no limit); over it, 429 with Retry-After")
	var cl gnomon.Cluster
	var roles, machines []string
	f.StringSliceVar(&roles, "roles", nil, "make the server a node of a cluster on its PostgreSQL database, playing these roles: director, clock, worker (see docs/cluster.md)")
	f.StringVar(&cl.Node, "node", "", "the node's name in the cluster (default HOST-PID)")
	f.DurationVar(&cl.Timeout, "node-timeout", 5*time.Second, "how long a node of the cluster may be silent before it is found dead and its partitions move")
	f.IntVar(&cl.Space.Size, "space", cluster.DefaultSpace.Size, "the cluster's minute spots: a schedule's spot is (hour × 60 + minute) mod this, 1 to 1440")
	f.IntVar(&cl.Space.Partitions, "partitions", cluster.DefaultSpace.Partitions, "how many partitions the minute spots are grouped into, 1 to --space")
	f.BoolVar(&cl.Space.Scatter, "scatter-steps", false, "place each occurrence of a schedule that repeats under an hour (every minute, */15) on the spot of its own minute, rather than the schedule on a dedicated spot per step")
	f.StringSliceVar(&machines, "machines", nil, "machine names this node's workers serve")
	f.BoolVar(&cfg.Standby, "standby", false, "with the director role: while another director holds the cluster, wait as its standby (playing the node's other roles, answering 503) and take the cluster over when that director leaves, or dies (its lease unrenewed for two node timeouts), rather than refuse to start")
	f.BoolVar(&cl.Simulated, "simulated", false, "on a node that is not a director: follow the virtual clock of a director started with --simulate-from (every other node of a simulating cluster needs it)")
	c.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Flags().Changed("roles") {
			cl.Roles, cl.Machines = roles, machines
			if err := cluster.CheckRoles(cl.Roles); err != nil {
				return usageErr("--roles: %v", err)
			}
			if err := cl.Space.Check(); err != nil {
				return usageErr("--space, --partitions: %v", err)
			}
			if cl.Timeout <= 0 {
				return usageErr("--node-timeout: %s should be positive", cl.Timeout)
			}
			director := slices.Contains(cl.Roles, cluster.RoleDirector)
			if cl.Simulated && director {
				return usageErr("--simulated: a director simulates with --simulate-from; the other nodes take --simulated")
			}
			if cfg.SimulateFrom != "" && !director {
				return usageErr("--simulate-from: only a director takes it; the other nodes of a simulating cluster take --simulated")
			}
			if cfg.Standby && !director {
				return usageErr("--standby: only a director waits as a standby; give --roles director (and the node's other roles)")
			}
			if cfg.Standby && cfg.SimulateFrom != "" {
				return usageErr("--standby: a simulating director has no standby")
			}
			cfg.Cluster = &cl
		} else {
			for _, fl := range []string{"node", "node-timeout", "space", "partitions", "scatter-steps", "machines", "simulated", "standby"} {
				if cmd.Flags().Changed(fl) {
					return usageErr("--%s: only a node of a cluster (--roles) takes it", fl)
				}
			}
		}
		cfg.EventLateness = lateness
		if lateness == 0 {
			cfg.EventLateness = -1
		}
		return nil
	}
	return c
}
