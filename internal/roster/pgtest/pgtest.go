// Package pgtest starts a private PostgreSQL cluster for tests: initdb and
// pg_ctl in a temporary directory, listening on a loopback port, so no
// test depends on a server already running. The binaries are found with
// pg_config --bindir or under /usr/lib/postgresql/*/bin, never by PATH.
// initdb refuses to run as root, so as root (CI) the cluster runs as the
// unprivileged postgres user that Debian's postgresql package creates.
// The server is started with pg_ctl -l, so it never inherits a pipe a test
// waits on.
//
// Without PostgreSQL binaries a test is skipped, unless the environment
// variable CI is set: then it fails, so CI cannot pass without running the
// PostgreSQL roster.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Superuser is the cluster's superuser.
const Superuser = "fluxgit"

// Server is one running private cluster.
type Server struct {
	// Dir holds the data directory and the log.
	Dir string
	// Port is the loopback TCP port.
	Port int
	// Password is Superuser's password (TCP connections need it).
	Password string
	bin      string
	runAs    string
	mu       sync.Mutex
	running  bool
}

// BinDir finds the PostgreSQL server binaries: pg_config --bindir when
// pg_config exists and its directory holds initdb and pg_ctl, else the
// newest /usr/lib/postgresql/N/bin that does.
func BinDir() (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "pg_ctl", "postgres"} {
			if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() {
				return false
			}
		}
		return true
	}
	for _, pgc := range []string{"/usr/bin/pg_config", "/usr/local/bin/pg_config", "/opt/homebrew/bin/pg_config"} {
		if out, err := exec.Command(pgc, "--bindir").Output(); err == nil {
			if dir := strings.TrimSpace(string(out)); has(dir) {
				return dir, nil
			}
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL server binaries (pg_config --bindir, /usr/lib/postgresql/*/bin); install Debian's postgresql package")
}

func version(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

// unavailable skips the test, or fails it in CI.
func unavailable(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("PostgreSQL is required in CI: %v", err)
	}
	t.Skipf("PostgreSQL roster tests skipped: %v", err)
}

// Start initialises and starts a cluster; it is stopped when the test
// ends.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := start()
	if err != nil {
		var na *notAvailable
		if errors.As(err, &na) {
			unavailable(t, na.err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { s.remove() })
	return s
}

type notAvailable struct{ err error }

func (e *notAvailable) Error() string { return e.err.Error() }

var (
	sharedOnce sync.Once
	shared     *Server
	sharedErr  error
)

// Shared returns the package's one cluster, starting it on first use; a
// TestMain calling Main stops it. Tests isolate themselves with
// NewDatabase.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedErr = start() })
	if sharedErr != nil {
		var na *notAvailable
		if errors.As(sharedErr, &na) {
			unavailable(t, na.err)
		}
		t.Fatal(sharedErr)
	}
	return shared
}

// Main runs the tests and then stops the shared cluster, if one started.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		shared.remove()
	}
	return code
}

func start() (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, &notAvailable{err}
	}
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, &notAvailable{fmt.Errorf("running as root and there is no postgres user to run the cluster as (initdb refuses root): %w", err)}
		}
		s.runAs = u.Username
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		// Under /tmp, not $TMPDIR: the postgres user must reach the
		// directory, and root's TMPDIR may sit in a private home.
		if s.Dir, err = os.MkdirTemp("/tmp", "fluxgit-pg-"); err != nil {
			return nil, err
		}
		if err := os.Chown(s.Dir, uid, gid); err != nil {
			return nil, err
		}
	} else if s.Dir, err = os.MkdirTemp("", "fluxgit-pg-"); err != nil {
		return nil, err
	}
	var pw [12]byte
	_, _ = rand.Read(pw[:])
	// A password with characters that need escaping in a URL, so the
	// redaction tests see the escaped form too.
	s.Password = "pw:" + hex.EncodeToString(pw[:]) + "@/"
	pwFile := filepath.Join(s.Dir, "pwfile")
	if err := s.writeFile(pwFile, s.Password+"\n"); err != nil {
		return nil, err
	}
	if out, err := s.run("initdb", "-D", s.data(), "-U", Superuser, "-E", "UTF8", "--no-sync", "--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile="+pwFile); err != nil {
		s.remove()
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// The free port may be taken before the server binds it: try again
	// on another.
	for attempt := 0; ; attempt++ {
		if s.Port, err = freePort(); err != nil {
			s.remove()
			return nil, err
		}
		if err = s.Restart(); err == nil {
			return s, nil
		}
		if attempt == 2 {
			s.remove()
			return nil, err
		}
	}
}

func (s *Server) data() string { return filepath.Join(s.Dir, "data") }

// Log is the server's log.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	return string(b)
}

func (s *Server) writeFile(path, text string) error {
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		return err
	}
	if s.runAs != "" {
		if fi, err := os.Stat(s.Dir); err == nil {
			if st, ok := statOwner(fi); ok {
				return os.Chown(path, st[0], st[1])
			}
		}
	}
	return nil
}

// run runs a server binary, as the postgres user when running as root.
// Its output goes to a file, never a pipe: pg_ctl's server would inherit
// it.
func (s *Server) run(name string, args ...string) (string, error) {
	cmdline := append([]string{filepath.Join(s.bin, name)}, args...)
	if s.runAs != "" {
		cmdline = append([]string{"runuser", "-u", s.runAs, "--"}, cmdline...)
	}
	out, err := os.CreateTemp(s.Dir, "cmd-*.out")
	if err != nil {
		return "", err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmdline[0], cmdline[1:]...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	err = cmd.Run()
	b, _ := os.ReadFile(out.Name())
	return string(b), err
}

// Restart starts the (stopped or killed) cluster again on the same port
// and data.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Loopback TCP only: no unix socket, whose path could pass the
	// 107-byte limit under a long temporary directory. fsync=off: a test
	// cluster survives process kills (the page cache keeps the WAL), not
	// power cuts, which no test makes.
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -c unix_socket_directories='' -c max_connections=300 -c fsync=off", s.Port)
	out, err := s.run("pg_ctl", "-D", s.data(), "-l", filepath.Join(s.Dir, "server.log"), "-o", opts, "-w", "-t", "60", "start")
	if err != nil {
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, s.Log())
	}
	s.running = true
	return nil
}

// Kill stops the server at once (pg_ctl stop -m immediate: every backend
// is killed without a shutdown checkpoint, as in a crash; the next start
// recovers from the WAL).
func (s *Server) Kill() error { return s.stop("immediate") }

// Stop shuts the server down cleanly.
func (s *Server) Stop() error { return s.stop("fast") }

func (s *Server) stop(mode string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return nil
	}
	out, err := s.run("pg_ctl", "-D", s.data(), "-m", mode, "-w", "stop")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	s.running = false
	return nil
}

func (s *Server) remove() {
	_ = s.stop("immediate")
	_ = os.RemoveAll(s.Dir)
}

// URL is the postgres:// URL of database db for Superuser over loopback
// TCP, password included.
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(Superuser, s.Password), Host: fmt.Sprintf("127.0.0.1:%d", s.Port), Path: "/" + db,
		RawQuery: "sslmode=disable"}
	return u.String()
}

var dbSeq struct {
	sync.Mutex
	n int
}

// NewDatabase creates an empty database for one test and returns its URL;
// it is dropped when the test ends.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	dbSeq.Lock()
	dbSeq.n++
	name := fmt.Sprintf("roster_%d_%d", os.Getpid(), dbSeq.n)
	dbSeq.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("connect to the test cluster: %v\n%s", err, s.Log())
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, s.URL("postgres")); err == nil {
			_, _ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			_ = c.Close(ctx)
		}
	})
	return s.URL(name)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
