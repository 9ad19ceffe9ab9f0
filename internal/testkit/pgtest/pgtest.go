package pgtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// startTimeout bounds initdb and the server's start (pg_ctl -t), which on a
// loaded two-core machine take a few seconds.
const startTimeout = 60 * time.Second

// Server is one throwaway PostgreSQL cluster. The zero value is ready for
// Main; its methods are safe for concurrent use by parallel tests.
type Server struct {
	mu sync.Mutex
	// missing says what is not installed; err why an installed server
	// could not start. At most one is set, after Start.
	missing string
	err     error
	started bool

	dir    string // data directory, also the socket directory
	bin    string // the PostgreSQL bin directory
	asUser bool   // commands run as the postgres user (we are root)
	port   int

	watchdog *exec.Cmd
	pipe     io.WriteCloser // the watchdog's stdin: closing it stops the server

	dbs atomic.Int64 // databases made, for unique names
}

// Main runs the tests (checking for leaked goroutines as
// goleak.VerifyTestMain does), stops s and exits with the tests' code, or 1
// if stopping s failed. The server starts when a test first asks for a
// database, so a package pays for it only if it uses it. A package's
// TestMain is then just
//
//	var pg pgtest.Server
//	func TestMain(m *testing.M) { pg.Main(m) }
func (s *Server) Main(m *testing.M, opts ...goleak.Option) {
	opts = append(opts, goleak.Cleanup(func(code int) {
		if err := s.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
		os.Exit(code)
	}))
	goleak.VerifyTestMain(m, opts...)
}

// Start starts the server, unless it was started already. It does not
// fail: what went wrong is reported to each test that asks for a database
// (URL), which calls Start itself.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started = true
	bin, err := binDir()
	if err != nil {
		s.missing = err.Error()
		return
	}
	s.bin = bin
	if err := s.start(); err != nil {
		s.err = err
	}
}

// binDir is the newest installed PostgreSQL's bin directory.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	var ok []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			ok = append(ok, d)
		}
	}
	if len(ok) == 0 {
		return "", errors.New("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/pg_ctl): apt-get install -y postgresql")
	}
	slices.SortFunc(ok, func(a, b string) int { return version(a) - version(b) })
	return ok[len(ok)-1], nil
}

// version is the major version in a /usr/lib/postgresql/N/bin path (0 if
// it is not a number), so that 15 sorts after 9.
func version(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

func (s *Server) start() error {
	s.asUser = os.Geteuid() == 0
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return fmt.Errorf("pgtest: data directory: %w", err)
	}
	s.dir = dir
	if s.asUser {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("pgtest: running as root needs the postgres user that Debian's package creates: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("pgtest: data directory: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if out, err := s.command(ctx, "initdb", "-D", dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	if err := s.startWatchdog(); err != nil {
		os.RemoveAll(dir)
		return err
	}
	// The free port is found by binding :0 and letting it go; another
	// process may take it in between, so a refused start is retried on a
	// new port.
	var last error
	for range 3 {
		port, err := freePort()
		if err != nil {
			return errors.Join(err, s.stop())
		}
		out, err := s.command(ctx, "pg_ctl", "-D", dir, "-l", filepath.Join(dir, "log"), "-w", "-t", strconv.Itoa(int(startTimeout/time.Second)),
			"-o", s.serverOptions(port), "start").CombinedOutput()
		if err == nil {
			s.port = port
			return nil
		}
		last = fmt.Errorf("pgtest: pg_ctl start on port %d: %w\n%s\n%s", port, err, out, s.logTail())
	}
	return errors.Join(last, s.stop())
}

// startWatchdog starts the process that stops the server and deletes its
// directory once its stdin closes: when Stop closes it, or when the test
// binary ends without Stop.
func (s *Server) startWatchdog() error {
	script := `cat >/dev/null
"$1/pg_ctl" -D "$2" -m fast -w -t 30 stop >/dev/null 2>&1
rm -rf "$2"`
	cmd := s.command(context.Background(), "sh", "-c", script, "pgtest-watchdog", s.bin, s.dir)
	pipe, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("pgtest: watchdog: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: watchdog: %w", err)
	}
	s.watchdog, s.pipe = cmd, pipe
	return nil
}

// command is a PostgreSQL program (or, for "sh", the shell) run as the
// postgres user when we are root.
func (s *Server) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	path := name
	if name != "sh" {
		path = filepath.Join(s.bin, name)
	}
	if s.asUser {
		return exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	}
	return exec.CommandContext(ctx, path, args...)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logTail is the end of the server's log, for errors.
func (s *Server) logTail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "log"))
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return "server log:\n" + string(b)
}

// Down stops the running server as an operator's restart does (pg_ctl
// stop -m fast: every connection is ended with SQLSTATE 57P01, new ones
// are refused), keeping its data; Up starts it again on the same port. A
// test that takes its server down should have a Server of its own, not
// the binary's shared one.
func (s *Server) Down() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchdog == nil {
		return errors.New("pgtest: Down: the server is not running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if out, err := s.command(ctx, "pg_ctl", "-D", s.dir, "-m", "fast", "-w", "-t", strconv.Itoa(int(startTimeout/time.Second)), "stop").CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: pg_ctl stop: %w\n%s", err, out)
	}
	return nil
}

// Up starts a server that Down stopped, on the port it had.
func (s *Server) Up() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.watchdog == nil {
		return errors.New("pgtest: Up: the server was never started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	out, err := s.command(ctx, "pg_ctl", "-D", s.dir, "-l", filepath.Join(s.dir, "log"), "-w", "-t", strconv.Itoa(int(startTimeout/time.Second)),
		"-o", s.serverOptions(s.port), "start").CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: pg_ctl start on port %d: %w\n%s\n%s", s.port, err, out, s.logTail())
	}
	return nil
}

// serverOptions are the server's settings (pg_ctl -o) on port.
func (s *Server) serverOptions(port int) string {
	return fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c max_connections=200", port, s.dir)
}

// Stop stops the server and deletes its directory. Stopping a server that
// never started, or twice, does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop()
}

func (s *Server) stop() error {
	if s.watchdog == nil {
		return nil
	}
	s.pipe.Close()
	err := s.watchdog.Wait()
	s.watchdog = nil
	if err != nil {
		return fmt.Errorf("pgtest: stopping the server: %w", err)
	}
	if _, err := os.Stat(s.dir); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("pgtest: the server's directory %s is still there after stopping it", s.dir)
	}
	return nil
}

// url is the server's URL for database name.
func (s *Server) url(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, name)
}

// URL creates a fresh, empty database for t and returns its URL
// (postgres://...); the database is dropped when t ends, after the
// cleanups t registers later (so a store opened on it is closed first).
// The first call starts the server. Where PostgreSQL is missing it fails t
// under CI and skips t elsewhere; where the server could not start it
// fails t.
func (s *Server) URL(t testing.TB) string {
	t.Helper()
	s.Start()
	s.mu.Lock()
	missing, err := s.missing, s.err
	s.mu.Unlock()
	switch {
	case missing != "":
		if os.Getenv("CI") != "" {
			t.Fatalf("pgtest: %s — CI must install it (.ci/run)", missing)
		}
		t.Skipf("SKIPPED, NOT TESTED: %s", missing)
	case err != nil:
		t.Fatal(err)
	}
	name := fmt.Sprintf("cadre_test_%d", s.dbs.Add(1))
	if err := s.admin(t.Context(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		// FORCE ends connections a test left open (its own defect,
		// which goleak or the test reports), so the drop never waits.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.admin(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return s.url(name)
}

// OverSocket is dbURL, one of URL's, reaching the server through its Unix
// socket instead of TCP: the database in the URL's path, the socket's
// directory in its host parameter, as libpq spells it.
func (s *Server) OverSocket(t testing.TB, dbURL string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	q := u.Query()
	q.Set("host", s.dir)
	q.Set("port", strconv.Itoa(s.port))
	u.Host, u.RawQuery = "", q.Encode()
	return u.String()
}

// admin runs one statement on the maintenance database.
func (s *Server) admin(ctx context.Context, stmt string) error {
	conn, err := pgx.Connect(ctx, s.url("postgres"))
	if err != nil {
		return fmt.Errorf("connect to the test server: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("%s: %w", stmt, err)
	}
	return nil
}
