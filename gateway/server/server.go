// Package server is the approval gateway's HTTP server: the agent API the
// handshake provider speaks (README.md, "Write proposals"), the terminal
// CLI API, the lifecycle a person drives from the approval page or the
// terminal, and the worker that executes approved proposals one at a time.
//
// It listens on loopback only. Every request must name the gateway itself
// in its Host header (a DNS-rebinding page names another host), no CORS
// header is ever sent, and only the person's surfaces (the page, with its
// cookie and CSRF token, and the CLI API, with the bearer secret) can
// decide: no route of the agent API approves anything.
package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/fluxgit/fluxgit/gateway/execute"
	"github.com/fluxgit/fluxgit/gateway/journal"
	"github.com/fluxgit/fluxgit/gateway/policy"
	"github.com/fluxgit/fluxgit/internal/audit"
	"github.com/fluxgit/fluxgit/internal/credpaths"
	"github.com/fluxgit/fluxgit/internal/privdir"
	"github.com/fluxgit/fluxgit/internal/rundir"
)

// DefaultAddr is where the gateway listens unless told otherwise: the
// address the handshake provider documentation uses as its example.
const DefaultAddr = "127.0.0.1:59647"

// DefaultTTL is how long a proposal waits for a person.
const DefaultTTL = 5 * time.Minute

// pruneAge is how long a terminal proposal is kept, so that a late status
// read or an idempotent replay still finds it.
const pruneAge = time.Hour

// Intake bounds (issue 22): a flood of proposals must not take the
// person's view away or fill the disk. Agent ids are self-declared, so
// each bound per agent has a total beside it.
const (
	// DefaultMaxPendingPerAgent is how many proposals one agent id may
	// have waiting for the person.
	DefaultMaxPendingPerAgent = 20
	// DefaultMaxPending is how many proposals may wait in total: more
	// than a person reviews in one sitting, and every one of them fits
	// the approval page's first few pages.
	DefaultMaxPending = 100
	// DefaultMaxStoredBytesPerAgent bounds the body bytes the journal
	// keeps for one agent id (pending or decided, until pruned an hour
	// after they end): two of the largest proposals (MaxPreviewBody).
	DefaultMaxStoredBytesPerAgent int64 = 64 << 20
	// DefaultMaxStoredBytes bounds the body bytes the journal keeps in
	// total.
	DefaultMaxStoredBytes int64 = 256 << 20
)

// Config configures a Server.
type Config struct {
	// Addr is the ip:port to listen on: an IP literal in 127.0.0.0/8 or
	// ::1 (port 0 picks a free port). Empty means DefaultAddr.
	Addr string
	// RunDir is the FluxGit run directory; the journal and lock live in
	// RunDir/gateway, restore points in RunDir/rebase and RunDir/repos.
	// The session secret never does: read tools take a run directory as
	// an argument, and a run directory may lie inside a project.
	RunDir string
	// SecretDir is the private per-user directory the session file is
	// written to (credpaths.SessionFileName(RunDir) inside it); it must
	// lie where no read tool reaches (credpaths.Reachable). Empty means
	// credpaths.ChooseSecretDir(nil).
	SecretDir string
	// TTL is how long a proposal stays pending; 0 means DefaultTTL.
	TTL time.Duration
	// Policy is the agent policy; nil allows every agent every operation
	// (a person still approves each one).
	Policy *policy.Policy
	// AllowedRoots are the FLUXGIT_MCP_ALLOWED_ROOTS the gateway started
	// with (canonical). Before a policy's autoApprove rule approves a
	// proposal, the gateway checks again that the policy file lies outside
	// them and every git work tree (credpaths.Reachable); if it no longer
	// does, the proposal waits for the person.
	AllowedRoots []string
	// Ledger receives human decisions and execution outcomes; nil
	// disables auditing.
	Ledger *audit.Ledger
	// Log receives operational messages; nil discards them.
	Log *slog.Logger
	// Out receives the two start-up lines a person reads (the handshake
	// address and the approval page address); nil discards them.
	Out io.Writer
	// Notices receives one line per proposal that arrives and per
	// decision and outcome (NoticeLine), for the person watching the
	// gateway's terminal; nil prints none.
	Notices io.Writer
	// MaxPendingPerAgent, MaxPending, MaxStoredBytesPerAgent and
	// MaxStoredBytes bound what agents can make the gateway hold (see
	// journal.Quota); 0 means the Default… value.
	MaxPendingPerAgent     int
	MaxPending             int
	MaxStoredBytesPerAgent int64
	MaxStoredBytes         int64
	// GuardOverride lets every approved commit through the shift-roster
	// guard (FLUXGIT_GUARD_OVERRIDE=1 in the gateway's environment: the
	// person's standing override); see execute.Options.GuardOverride.
	GuardOverride bool
}

// quota is cfg's intake bounds with the defaults filled in.
func (cfg Config) quota() journal.Quota {
	q := journal.Quota{
		PendingPerAgent: cfg.MaxPendingPerAgent,
		PendingTotal:    cfg.MaxPending,
		BytesPerAgent:   cfg.MaxStoredBytesPerAgent,
		BytesTotal:      cfg.MaxStoredBytes,
	}
	if q.PendingPerAgent <= 0 {
		q.PendingPerAgent = DefaultMaxPendingPerAgent
	}
	if q.PendingTotal <= 0 {
		q.PendingTotal = DefaultMaxPending
	}
	if q.BytesPerAgent <= 0 {
		q.BytesPerAgent = DefaultMaxStoredBytesPerAgent
	}
	if q.BytesTotal <= 0 {
		q.BytesTotal = DefaultMaxStoredBytes
	}
	return q
}

// Server is a running approval gateway.
type Server struct {
	cfg     Config
	log     *slog.Logger
	ln      net.Listener
	addr    string // bound ip:port, as Host headers must name it
	port    string
	secret  string
	dir     string // RunDir/gateway
	session string // the session file, in Config.SecretDir
	lock    *os.File
	journal *journal.Journal
	exec    *execute.Executor
	handler http.Handler
	now     func() time.Time

	wake chan struct{}

	noticeMu sync.Mutex // one notice line at a time on Config.Notices

	subMu   sync.Mutex
	subs    map[int]chan Change
	nextSub int

	closeOnce sync.Once
	closeErr  error
}

// New validates cfg, takes the run directory's gateway lock, opens the
// journal and binds the listener. Serve starts serving; Close releases
// everything when Serve is never called.
func New(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultTTL
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if err := CheckLoopback(cfg.Addr); err != nil {
		return nil, err
	}
	if cfg.RunDir == "" || !filepath.IsAbs(cfg.RunDir) {
		return nil, fmt.Errorf("gateway run directory %q must be an absolute path", cfg.RunDir)
	}
	dir := rundir.GatewayDir(cfg.RunDir)
	if err := privdir.Check(dir, privdir.Options{Label: "gateway directory", Create: true}); err != nil {
		var pe *privdir.Error
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w. %s", err, pe.Fix())
		}
		return nil, fmt.Errorf("gateway directory %s: %w", dir, err)
	}
	if cfg.SecretDir == "" {
		d, err := credpaths.ChooseSecretDir(nil)
		if err != nil {
			return nil, err
		}
		cfg.SecretDir = d
	}
	if !filepath.IsAbs(cfg.SecretDir) {
		return nil, fmt.Errorf("gateway secret directory %q must be an absolute path", cfg.SecretDir)
	}
	if err := privdir.Check(cfg.SecretDir, privdir.Options{Label: "gateway secret directory", Create: true}); err != nil {
		var pe *privdir.Error
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%w. %s", err, pe.Fix())
		}
		return nil, fmt.Errorf("gateway secret directory %s: %w", cfg.SecretDir, err)
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Log,
		dir:     dir,
		session: SessionPath(cfg.SecretDir, cfg.RunDir),
		now:     time.Now,
		wake:    make(chan struct{}, 1),
		subs:    map[int]chan Change{},
	}
	lock, err := lockFile(filepath.Join(dir, "gateway.lock"))
	if err != nil {
		return nil, err
	}
	s.lock = lock
	fail := func(err error) (*Server, error) {
		s.release()
		return nil, err
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return fail(fmt.Errorf("generate the approval secret: %w", err))
	}
	s.secret = base64.RawURLEncoding.EncodeToString(secret)
	j, err := journal.Open(filepath.Join(dir, "journal.db"))
	if err != nil {
		return fail(fmt.Errorf("open the gateway journal: %w", err))
	}
	s.journal = j
	j.SetQuota(cfg.quota())
	s.exec = execute.New(execute.Options{RunDir: cfg.RunDir, Now: s.now, GuardOverride: cfg.GuardOverride})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fail(fmt.Errorf("listen on %s: %w (is another gateway or program using the port? choose another with --addr)", cfg.Addr, err))
	}
	s.ln = ln
	s.addr = ln.Addr().String()
	_, s.port, _ = net.SplitHostPort(s.addr)
	s.handler = s.routes()
	return s, nil
}

// CheckLoopback refuses an address that is not ip:port with an IP literal
// in 127.0.0.0/8 or ::1: the gateway executes Git operations for whoever
// can reach it, so it must never be reachable from another machine.
func CheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("gateway address %q is not ip:port (for example %s): %w", addr, DefaultAddr, err)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || (n == 0 && port != "0") {
		return fmt.Errorf("gateway address %q has no valid port (0-65535)", addr)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("gateway address %q must use an IP literal, not a host name; use 127.0.0.1 or [::1]", addr)
	}
	if !ip.IsLoopback() {
		return fmt.Errorf("gateway address %q is not loopback; the gateway only listens on 127.0.0.0/8 or ::1", addr)
	}
	return nil
}

// Addr is the bound ip:port, the value of FLUXGIT_MCP_HANDSHAKE_ADDR.
func (s *Server) Addr() string { return s.addr }

// Secret is this start's approval secret: the page address carries it and
// the CLI API wants it as a bearer token.
func (s *Server) Secret() string { return s.secret }

// Handler is the gateway's whole HTTP handler (Host check included).
func (s *Server) Handler() http.Handler { return s.handler }

// Session is the content of the session file, which tells the terminal
// CLI where the running gateway is and how to authenticate.
type Session struct {
	Addr      string `json:"addr"`
	Secret    string `json:"secret"`
	PID       int    `json:"pid"`
	StartedAt string `json:"startedAt"`
	// RunDir is the run directory the gateway serves, so that a reader
	// can tell the file is the one it looked for.
	RunDir string `json:"runDir,omitempty"`
}

// SessionPath is where a gateway on runDir keeps its session file when
// its secret directory is secretDir.
func SessionPath(secretDir, runDir string) string {
	return filepath.Join(secretDir, credpaths.SessionFileName(runDir))
}

// LegacySessionPath is where gateways before issue 22 kept the session
// file: inside the run directory, where a read tool could open it. A
// gateway removes a file left there when it starts.
func LegacySessionPath(runDir string) string { return filepath.Join(runDir, "gateway", "session.json") }

// SessionPath is this gateway's session file.
func (s *Server) SessionPath() string { return s.session }

// Serve settles the proposals an earlier run left behind, announces the
// gateway, serves until ctx ends, then shuts down: the execution in
// progress finishes first, the session file is removed and the journal
// closed.
func (s *Server) Serve(ctx context.Context) error {
	defer s.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := s.startup(ctx); err != nil {
		return err
	}
	// A secret an older gateway left in the run directory is still a
	// live credential's shape: remove it before announcing.
	if err := os.Remove(LegacySessionPath(s.cfg.RunDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the old session file %s (it must not stay where read tools reach): %w", LegacySessionPath(s.cfg.RunDir), err)
	}
	if err := s.writeSession(); err != nil {
		return err
	}
	defer os.Remove(s.session)
	fmt.Fprintf(s.cfg.Out, "FLUXGIT_MCP_HANDSHAKE_ADDR=%s\n", s.addr)
	fmt.Fprintf(s.cfg.Out, "Approval page: http://%s/?s=%s\n", s.addr, s.secret)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); s.worker(ctx) }()
	go func() { defer wg.Done(); s.housekeeping(ctx) }()
	s.kick()

	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(s.ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	// Streams (the page's live updates) end with ctx; Shutdown waits for
	// the rest.
	if serr := hs.Shutdown(sctx); serr != nil {
		_ = hs.Close()
	}
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Close releases the listener, the journal and the lock. Serve calls it;
// call it only for a Server that is never served.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.ln != nil {
			_ = s.ln.Close()
		}
		s.closeErr = s.release()
	})
	return s.closeErr
}

func (s *Server) release() error {
	var err error
	if s.journal != nil {
		err = s.journal.Close()
	}
	if s.lock != nil {
		_ = s.lock.Close() // closing the descriptor drops the lock
	}
	return err
}

func (s *Server) writeSession() error {
	b, err := json.MarshalIndent(Session{
		Addr:      s.addr,
		Secret:    s.secret,
		PID:       os.Getpid(),
		StartedAt: stamp(s.now()),
		RunDir:    s.cfg.RunDir,
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode session file: %w", err)
	}
	return writeFileAtomic(s.session, append(b, '\n'), 0o600)
}

// writeFileAtomic writes path through a temporary file in the same
// directory, so a reader sees the old content or the new, never a part.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// routes builds the handler tree behind the Host check.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.HandlerFunc(s.agentAPI))
	mux.Handle("/cli/v1/", http.HandlerFunc(s.cliAPI))
	person := newPersonHandler(s)
	mux.Handle("/ui/", person)
	mux.Handle("/", person)
	return s.hostCheck(mux)
}

// hostCheck refuses any request whose Host is not this gateway: a page on
// another origin that rebinds its DNS name to 127.0.0.1 still sends its
// own name, and is turned away before any handler runs.
func (s *Server) hostCheck(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.CheckHost(r) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not this gateway; address it as %s", r.Host, s.addr))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// CheckHost reports whether r's Host header names this gateway: the bound
// ip:port or localhost:<port>.
func (s *Server) CheckHost(r *http.Request) bool {
	return r.Host == s.addr || r.Host == "localhost:"+s.port
}

// writeJSON writes v with status. Nothing here ever sets a CORS header.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":"the gateway could not encode its reply"}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// writeError writes the {error} body every refusal carries; the handshake
// provider hands its text to the agent, so it says what to do.
func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// stamp renders t as the protocol's timestamps: RFC 3339 UTC with
// milliseconds and Z.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
