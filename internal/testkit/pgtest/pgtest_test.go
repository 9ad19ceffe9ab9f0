package pgtest

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var pg Server

func TestMain(m *testing.M) {
	if os.Getenv(crashEnv) != "" {
		crashChild()
		return
	}
	pg.Main(m)
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect to %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestFreshDatabasePerTest: each URL is its own empty database, on
// 127.0.0.1 only, with fsync off, and it is gone once its test ends.
func TestFreshDatabasePerTest(t *testing.T) {
	var first, second string
	t.Run("first", func(t *testing.T) {
		first = pg.URL(t)
		c := connect(t, first)
		if _, err := c.Exec(t.Context(), "CREATE TABLE marker (x int)"); err != nil {
			t.Fatal(err)
		}
		var fsync, listen string
		if err := c.QueryRow(t.Context(), "SELECT current_setting('fsync'), current_setting('listen_addresses')").Scan(&fsync, &listen); err != nil {
			t.Fatal(err)
		}
		if fsync != "off" || listen != "127.0.0.1" {
			t.Errorf("fsync = %s, listen_addresses = %s; want off, 127.0.0.1", fsync, listen)
		}
	})
	t.Run("second", func(t *testing.T) {
		second = pg.URL(t)
		if second == first {
			t.Fatalf("two tests got the same database %s", first)
		}
		var n int
		if err := connect(t, second).QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename = 'marker'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Error("a fresh database has the table another test created")
		}
	})
	admin := connect(t, pg.url("postgres"))
	for _, u := range []string{first, second} {
		name := u[strings.LastIndex(u, "/")+1 : strings.Index(u, "?")]
		var n int
		if err := admin.QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("database %s still exists after its test ended", name)
		}
	}
}

// recorder is a testing.TB that records how URL ended the test.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = format
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
	runtime.Goexit()
}

// TestNotInstalled: a missing PostgreSQL fails a test under CI and skips it,
// loudly, elsewhere.
func TestNotInstalled(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		s := &Server{started: true, missing: "PostgreSQL is not installed"}
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.URL(r)
		}()
		<-done
		if ci == "" && !strings.HasPrefix(r.skipped, "SKIPPED, NOT TESTED") {
			t.Errorf("without CI: skipped %q, failed %q; want a loud skip", r.skipped, r.failed)
		}
		if ci != "" && (r.failed == "" || r.skipped != "") {
			t.Errorf("under CI: skipped %q, failed %q; want a failure", r.skipped, r.failed)
		}
	}
}

const crashEnv = "PGTEST_CRASH_CHILD"

// crashChild starts a server, prints its directory and port, and waits to
// be killed.
func crashChild() {
	var s Server
	s.Start()
	if s.err != nil || s.missing != "" {
		os.Stdout.WriteString("error\n")
		os.Exit(1)
	}
	os.Stdout.WriteString(s.dir + " " + s.url("postgres") + "\n")
	select {}
}

// TestKilledBinaryLeavesNoServer: a test binary killed outright (no
// cleanup runs) still leaves no server running and no directory behind.
func TestKilledBinaryLeavesNoServer(t *testing.T) {
	pg.URL(t) // skips or fails as every test here does when PostgreSQL is missing
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make([]byte, 4096)
	n, err := out.Read(line)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child said nothing: %v", err)
	}
	fields := strings.Fields(string(line[:n]))
	if len(fields) != 2 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child said %q, want its directory and URL", line[:n])
	}
	dir, url := fields[0], fields[1]
	connect(t, url) // the child's server is up
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := os.Stat(dir)
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still exists a minute after the binary that started its server was killed", dir)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if c, err := pgx.Connect(ctx, url); err == nil {
		c.Close(context.Background())
		t.Errorf("the killed binary's server at %s still accepts connections", url)
	}
}

// TestServerCPU: the server's processor time grows with the work it is
// given: a backend's while it runs, and still once it has ended and the
// postmaster has reaped it (counted then in the postmaster's children's
// times), which happens a moment after its client closed the connection.
func TestServerCPU(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the server's CPU time is read from /proc, on Linux only")
	}
	url := pg.URL(t)
	before, err := pg.CPU()
	if err != nil {
		t.Fatal(err)
	}
	c, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	// Some 0.2 s of a backend's CPU.
	if _, err := c.Exec(t.Context(), "SELECT count(*) FROM generate_series(1, 3000000)"); err != nil {
		t.Fatal(err)
	}
	running, err := pg.CPU()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the server used %v", running-before)
	if running-before < 50*time.Millisecond {
		t.Errorf("the server's CPU grew by %v over a query of some 0.2 s; want at least 50ms", running-before)
	}
	c.Close(context.Background())
	const reapLimit = 10 * time.Second
	deadline := time.Now().Add(reapLimit)
	for {
		ended, err := pg.CPU()
		if err != nil {
			t.Fatal(err)
		}
		if ended >= running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's CPU fell from %v to %v once the backend ended, and stayed there for %v", running, ended, reapLimit)
		}
		time.Sleep(10 * time.Millisecond) // polling /proc: the reap sends no event
	}
}
