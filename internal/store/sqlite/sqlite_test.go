package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/session/sessiontest"
	"github.com/cadre-dev/cadre/internal/store/migration"
	"github.com/cadre-dev/cadre/llm"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func open(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Index {
		return open(t, filepath.Join(t.TempDir(), "cadre.db"))
	})
}

var timeEqual = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func info(id string) session.Info {
	return session.Info{
		ID: id, ParentID: "p", Agent: "explorer", Key: "agent:explorer:subagent:" + id, Title: "(@explorer subagent)",
		Cwd: "/w", Status: session.StatusRunning,
		Created: time.UnixMilli(1_780_000_000_000).UTC(), Updated: time.UnixMilli(1_780_000_000_500).UTC(),
		Usage:   llm.Usage{InputTokens: 1, OutputTokens: 2, CacheCreationInputTokens: 3, CacheReadInputTokens: 4},
		CostUSD: llm.USD(0.01), NumTurns: 2, TranscriptPath: "/s/" + id + ".jsonl",
	}
}

func TestPersistsAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "cadre.db") // the directory is created
	db := open(t, path)
	want := info("s1")
	if err := db.CreateSession(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	err := db.UpdateSession(t.Context(), "s1", func(s *session.Info) error {
		s.Status = session.StatusCompleted
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	db2 := open(t, path)
	got, err := db2.GetSession(t.Context(), "s1")
	if err != nil {
		t.Fatalf("GetSession after reopening: %v", err)
	}
	want.Status = session.StatusCompleted
	if diff := cmp.Diff(want, got, timeEqual); diff != "" {
		t.Errorf("after reopening (-want +got):\n%s", diff)
	}
}

// TestTwoHandles is two cadre processes sharing one database: both write at
// once, and neither loses the other's increments.
func TestTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	a, b := open(t, path), open(t, path)
	if err := a.CreateSession(t.Context(), info("shared")); err != nil {
		t.Fatal(err)
	}
	const each = 40
	var wg sync.WaitGroup
	errs := make(chan error, 4*each)
	for h, db := range []*DB{a, b} {
		wg.Go(func() {
			for i := range each {
				errs <- db.CreateSession(t.Context(), info(fmt.Sprintf("h%d-%02d", h, i)))
			}
		})
		wg.Go(func() {
			for range each {
				errs <- db.UpdateSession(t.Context(), "shared", func(s *session.Info) error {
					s.NumTurns++
					s.Usage.InputTokens += 1000
					return nil
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent write through two handles: %v", err)
		}
	}
	for name, db := range map[string]*DB{"a": a, "b": b} {
		all, err := db.ListSessions(t.Context(), session.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 2*each+1 {
			t.Errorf("handle %s sees %d sessions, want %d", name, len(all), 2*each+1)
		}
		got, err := db.GetSession(t.Context(), "shared")
		if err != nil {
			t.Fatal(err)
		}
		if got.NumTurns != 2+2*each || got.Usage.InputTokens != 1+2*each*1000 {
			t.Errorf("handle %s: NumTurns %d, InputTokens %d; want %d and %d (an update was lost)",
				name, got.NumTurns, got.Usage.InputTokens, 2+2*each, 1+2*each*1000)
		}
	}
}

// TestConcurrentOpenOfFreshFile: two processes starting at once on a new
// database must apply the migrations exactly once, and both succeed.
func TestConcurrentOpenOfFreshFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	const n = 4
	dbs := make([]*DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dbs[i], errs[i] = Open(t.Context(), path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("Open %d: %v", i, errs[i])
			continue
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	if t.Failed() {
		return
	}
	checkVersions(t, dbs[0], len(mustMigrations(t)))
}

func mustMigrations(t *testing.T) []migration.Step {
	t.Helper()
	ms, err := migration.Load(migrationFiles)
	if err != nil {
		t.Fatalf("load migrations: %v", err)
	}
	return ms
}

// checkVersions checks schema_version holds exactly versions 1..want.
func checkVersions(t *testing.T, db *DB, want int) {
	t.Helper()
	rows, err := db.r.QueryContext(t.Context(), `SELECT version FROM schema_version ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		got = append(got, v)
	}
	var wantList []int
	for v := 1; v <= want; v++ {
		wantList = append(wantList, v)
	}
	if diff := cmp.Diff(wantList, got); diff != "" {
		t.Errorf("schema_version rows (-want +got):\n%s", diff)
	}
}

func TestMigrationRerunIsNoop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	db := open(t, path)
	if err := db.CreateSession(t.Context(), info("s1")); err != nil {
		t.Fatal(err)
	}
	ms := mustMigrations(t)
	if err := db.migrate(t.Context(), ms); err != nil {
		t.Fatalf("migrate again: %v", err)
	}
	db.Close()
	db = open(t, path) // and once more through Open
	checkVersions(t, db, len(ms))
	if _, err := db.GetSession(t.Context(), "s1"); err != nil {
		t.Errorf("data lost by rerunning migrations: %v", err)
	}
}

func TestMigrationAddedLater(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	if err := db.CreateSession(t.Context(), info("s1")); err != nil {
		t.Fatal(err)
	}
	ms := append(mustMigrations(t), migration.Step{
		Version: len(mustMigrations(t)) + 1, Name: "notes",
		SQL: `CREATE TABLE notes (id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions (id)) STRICT;
		      CREATE INDEX notes_by_session ON notes (session_id);`,
	})
	for range 2 {
		if err := db.migrate(t.Context(), ms); err != nil {
			t.Fatalf("migrate with a new migration: %v", err)
		}
	}
	checkVersions(t, db, len(ms))
	// Both statements of the file ran, and foreign keys are enforced.
	if _, err := db.w.ExecContext(t.Context(), `INSERT INTO notes VALUES ('t1', 's1')`); err != nil {
		t.Errorf("insert into the new table: %v", err)
	}
	if _, err := db.w.ExecContext(t.Context(), `INSERT INTO notes VALUES ('t2', 'no-such-session')`); err == nil {
		t.Error("a dangling foreign key was accepted: foreign_keys is off")
	}
	var n int
	if err := db.r.QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_schema WHERE name = 'notes_by_session'`).Scan(&n); err != nil || n != 1 {
		t.Errorf("second statement of the migration did not run (count %d, err %v)", n, err)
	}
}

func TestMigrationFailureRollsBack(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	ms := append(mustMigrations(t), migration.Step{
		Version: len(mustMigrations(t)) + 1, Name: "broken",
		SQL: `CREATE TABLE half (x INTEGER); THIS IS NOT SQL;`,
	})
	err := db.migrate(t.Context(), ms)
	if err == nil || !strings.Contains(err.Error(), "_broken") {
		t.Fatalf("migrate with a broken migration: err = %v, want one naming it", err)
	}
	checkVersions(t, db, len(ms)-1)
	var n int
	db.r.QueryRowContext(t.Context(), `SELECT count(*) FROM sqlite_schema WHERE name = 'half'`).Scan(&n)
	if n != 0 {
		t.Error("a failed migration left its first statement applied")
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	db := open(t, path)
	if _, err := db.w.ExecContext(t.Context(), `INSERT INTO schema_version VALUES (99, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err := Open(t.Context(), path)
	if err == nil || !strings.Contains(err.Error(), "schema is at version 99") {
		t.Errorf("Open of a newer schema: err = %v, want a clear refusal", err)
	}
}

func TestConnectionSettings(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	pragma := func(pool string, name string) string {
		t.Helper()
		q := db.w
		if pool == "reader" {
			q = db.r
		}
		var v string
		if err := q.QueryRowContext(t.Context(), "PRAGMA "+name).Scan(&v); err != nil {
			t.Fatalf("PRAGMA %s on the %s: %v", name, pool, err)
		}
		return v
	}
	tests := []struct{ pool, pragma, want string }{
		{"writer", "journal_mode", "wal"},
		{"writer", "busy_timeout", "5000"},
		{"writer", "foreign_keys", "1"},
		{"writer", "synchronous", "1"}, // NORMAL
		{"writer", "query_only", "0"},
		{"writer", "wal_autocheckpoint", "0"}, // the checkpointer's job
		{"reader", "journal_mode", "wal"},
		{"reader", "busy_timeout", "5000"},
		{"reader", "foreign_keys", "1"},
		{"reader", "query_only", "1"},
	}
	for _, tt := range tests {
		if got := pragma(tt.pool, tt.pragma); got != tt.want {
			t.Errorf("%s: PRAGMA %s = %s, want %s", tt.pool, tt.pragma, got, tt.want)
		}
	}
	if got := db.w.Stats().MaxOpenConnections; got != 1 {
		t.Errorf("writer pool allows %d connections, want 1", got)
	}
	if _, err := db.r.ExecContext(t.Context(), `DELETE FROM sessions`); err == nil {
		t.Error("the reader pool accepted a write")
	}
}

func TestOpenPaths(t *testing.T) {
	dir := t.TempDir()
	odd := filepath.Join(dir, "with space", "q?mark#hash%25", "cadre.db")
	db := open(t, odd)
	if err := db.CreateSession(t.Context(), info("s1")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(odd); err != nil {
		t.Errorf("the database is not at %s: %v", odd, err)
	}
	if db.Path() != odd {
		t.Errorf("Path() = %s, want %s", db.Path(), odd)
	}

	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", ":memory:", "file:x.db?mode=memory", filepath.Join(blocker, "cadre.db")} {
		if db, err := Open(t.Context(), bad); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded, want an error", bad)
		} else if !strings.Contains(err.Error(), "open database") {
			t.Errorf("Open(%q) = %v, want it to say what failed", bad, err)
		}
	}
}

func BenchmarkCreateSession(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "cadre.db"))
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		if err := db.CreateSession(ctx, info(fmt.Sprintf("s%08d", i))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdateSession(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "cadre.db"))
	ctx := context.Background()
	if err := db.CreateSession(ctx, info("s1")); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := db.UpdateSession(ctx, "s1", func(s *session.Info) error { s.NumTurns++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGetSessions: the records of the ids that have one, read a chunk at
// a time (more ids than one chunk holds, one given twice), each the
// record GetSession reads; an unknown id is simply absent.
func TestGetSessions(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	var ids []string
	for i := range getSessionsChunk + 3 {
		id := fmt.Sprintf("s%04d", i)
		if err := db.CreateSession(t.Context(), info(id)); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	ask := append([]string{"nope", ids[0]}, ids...)
	got, err := db.GetSessions(t.Context(), ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ids) {
		t.Fatalf("GetSessions of %d ids and an unknown one: %d records, want %d", len(ids), len(got), len(ids))
	}
	for _, id := range []string{ids[0], ids[getSessionsChunk-1], ids[getSessionsChunk], ids[len(ids)-1]} {
		want, err := db.GetSession(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got[id], timeEqual); d != "" {
			t.Errorf("GetSessions[%s] differs from GetSession (-want +got):\n%s", id, d)
		}
	}
	if got, err := db.GetSessions(t.Context(), nil); err != nil || len(got) != 0 {
		t.Errorf("GetSessions(nil) = %v, %v; want nothing", got, err)
	}
}
