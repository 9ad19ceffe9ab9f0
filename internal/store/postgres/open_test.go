package postgres

import (
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
)

// TestOpenBadURLs: a URL that is not PostgreSQL's, or names no server that
// answers, is a clear error that never shows the password.
func TestOpenBadURLs(t *testing.T) {
	for _, tc := range []struct {
		name, url, want string
	}{
		{"empty", "", "want postgres://"},
		{"a path", "/var/lib/cadre.db", "want postgres://"},
		{"another scheme", "mysql://u:hunter2@db/cadre", "want postgres://"},
		{"no host", "postgres:///cadre", "has no host"},
		{"not a URL", "postgres://u:hunter2@db:port/cadre", "not a valid URL"},
		{"bad parameter", "postgres://u:hunter2@127.0.0.1/cadre?sslmode=sometimes", "sslmode"},
		// Port 1 on the loopback: nothing listens, the refusal is immediate.
		{"nobody there", "postgres://u:hunter2@127.0.0.1:1/cadre?sslmode=disable&connect_timeout=5", "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := Open(t.Context(), tc.url)
			if err == nil {
				db.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("err = %q spans lines (the CLI shows the first only)", msg)
			}
			if strings.Contains(msg, "hunter2") {
				t.Errorf("err = %v shows the password", err)
			}
		})
	}
}

// TestPoolSize: the pool is DefaultPoolConns() connections large unless the
// URL says otherwise.
func TestPoolSize(t *testing.T) {
	url := pg.URL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	for _, tc := range []struct {
		url  string
		want int32
	}{
		{url, DefaultPoolConns()},
		{url + sep + "pool_max_conns=7", 7},
	} {
		if got := open(t, tc.url).pool.Config().MaxConns; got != tc.want {
			t.Errorf("%s: pool of %d, want %d", tc.url, got, tc.want)
		}
	}
}

// TestOpenOverUnixSocket: a local server is reached through its Unix
// socket as libpq spells it, the socket's directory in the host
// parameter (postgres:///db?host=/run/postgresql): no TCP round trip
// through the loopback for each statement.
func TestOpenOverUnixSocket(t *testing.T) {
	url := pg.OverSocket(t, pg.URL(t))
	if !strings.HasPrefix(url, "postgres://postgres@/") {
		t.Fatalf("OverSocket gave %s, want no host in the authority", url)
	}
	db := open(t, url)
	now := time.Now()
	in := session.Info{ID: "01a22900-0000-7000-8000-000000000001", Agent: "main", Cwd: "/w", Status: session.StatusRunning, Created: now, Updated: now}
	if err := db.CreateSession(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetSession(t.Context(), in.ID)
	if err != nil || got.ID != in.ID {
		t.Fatalf("GetSession over the socket = %+v, %v", got, err)
	}
}
