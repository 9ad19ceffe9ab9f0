package postgres

import (
	"strings"
	"testing"
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
