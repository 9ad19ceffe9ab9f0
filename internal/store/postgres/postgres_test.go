package postgres

import (
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/session/sessiontest"
	"github.com/cadre-dev/cadre/internal/store/migration"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
	"github.com/cadre-dev/cadre/internal/testkit/pgtest"
	"github.com/cadre-dev/cadre/llm"
)

// pg is the test binary's throwaway server; every test gets its own
// database on it (pgtest.Server.URL).
var pg pgtest.Server

func TestMain(m *testing.M) { pg.Main(m) }

func open(t testing.TB, url string) *DB {
	t.Helper()
	db, err := Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestSessionConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T) session.Index { return open(t, pg.URL(t)) })
}

func TestTaskConformance(t *testing.T) {
	tasktest.Run(t, func(t *testing.T) task.Store { return open(t, pg.URL(t)) })
}

// Two handles of one database stand for two nodes: each has its own pool,
// so they share nothing but the server.

// TestTaskMarkNotifiedTwoHandles: two nodes announcing the same finished
// tasks; exactly one call per task wins.
func TestTaskMarkNotifiedTwoHandles(t *testing.T) {
	url := pg.URL(t)
	tasktest.RaceMarkNotified(t, open(t, url), open(t, url))
}

// TestTaskEndClaimTwoHandles: the update that records a task's end and
// claims its notification races MarkNotified on other nodes; no
// MarkNotified wins the flag the update claimed.
func TestTaskEndClaimTwoHandles(t *testing.T) {
	url := pg.URL(t)
	tasktest.RaceEndClaim(t, open(t, url), open(t, url), open(t, url))
}

// TestTaskEndsTwoHandles: two nodes record different ends of one run at
// once (it completes as a stop or a sweep fails it); one wins, the other
// is refused.
func TestTaskEndsTwoHandles(t *testing.T) {
	url := pg.URL(t)
	tasktest.RaceEnds(t, open(t, url), open(t, url))
}

// TestUpdatesTwoHandles: read-modify-writes of one record through two
// handles lose nothing, for tasks and sessions alike (without the row lock
// both would read the same count and one increment would be lost).
func TestUpdatesTwoHandles(t *testing.T) {
	url := pg.URL(t)
	a, b := open(t, url), open(t, url)
	tk := tasktest.Sample("shared")
	tk.ToolUses = 0
	if err := a.CreateTask(t.Context(), tk); err != nil {
		t.Fatal(err)
	}
	if err := a.CreateSession(t.Context(), info("shared")); err != nil {
		t.Fatal(err)
	}
	const each = 40
	var wg sync.WaitGroup
	errs := make(chan error, 4*each)
	for _, db := range []*DB{a, b} {
		wg.Go(func() {
			for range each {
				_, err := db.UpdateTask(t.Context(), "shared", func(t *task.Task) error { t.ToolUses++; return nil })
				errs <- err
			}
		})
		wg.Go(func() {
			for range each {
				errs <- db.UpdateSession(t.Context(), "shared", func(s *session.Info) error { s.NumTurns++; return nil })
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent updates through two handles: %v", err)
		}
	}
	for name, db := range map[string]*DB{"a": a, "b": b} {
		gt, err := db.GetTask(t.Context(), "shared")
		if err != nil {
			t.Fatal(err)
		}
		gs, err := db.GetSession(t.Context(), "shared")
		if err != nil {
			t.Fatal(err)
		}
		if gt.ToolUses != 2*each || gs.NumTurns != 2*each {
			t.Errorf("handle %s: task ToolUses = %d, session NumTurns = %d, want %d each (an update was lost)", name, gt.ToolUses, gs.NumTurns, 2*each)
		}
	}
}

func info(id string) session.Info {
	return session.Info{
		ID: id, ParentID: "p", Agent: "explorer", Key: "agent:explorer:subagent:" + id, Title: "(@explorer subagent)",
		Cwd: "/w", Status: session.StatusRunning,
		Created: time.UnixMilli(1_780_000_000_000).UTC(), Updated: time.UnixMilli(1_780_000_000_500).UTC(),
		Usage:   llm.Usage{InputTokens: 1, OutputTokens: 2, CacheCreationInputTokens: 3, CacheReadInputTokens: 4},
		CostUSD: llm.USD(0.01), NumTurns: 0, TranscriptPath: "/s/" + id + ".jsonl",
	}
}

// schemaVersions are the versions recorded in url's database.
func schemaVersions(t *testing.T, db *DB) []int {
	t.Helper()
	rows, err := db.pool.Query(t.Context(), `SELECT version FROM cadre_schema_version ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var vs []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

func allVersions(t *testing.T) []int {
	var vs []int
	for _, m := range mustLoad(t, migrationFiles) {
		vs = append(vs, m.Version)
	}
	return vs
}

// TestConcurrentOpenOfFreshDatabase: nodes starting at once on an empty
// database all open it, and the migrations are applied exactly once (the
// advisory lock makes the others wait and then find nothing to do).
func TestConcurrentOpenOfFreshDatabase(t *testing.T) {
	url := pg.URL(t)
	const nodes = 6
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		dbs   = make([]*DB, nodes)
		errs  = make([]error, nodes)
	)
	for i := range nodes {
		wg.Go(func() {
			<-start
			dbs[i], errs[i] = Open(t.Context(), url)
		})
	}
	close(start)
	wg.Wait()
	for i, db := range dbs {
		if db != nil {
			t.Cleanup(func() { db.Close() })
		}
		if errs[i] != nil {
			t.Fatalf("node %d: Open: %v", i, errs[i])
		}
	}
	if diff := cmp.Diff(allVersions(t), schemaVersions(t, dbs[0])); diff != "" {
		t.Errorf("schema versions recorded (-want +got):\n%s", diff)
	}
	// Every node can use the store.
	for i, db := range dbs {
		if err := db.CreateSession(t.Context(), info(fmt.Sprint("s", i))); err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}
}

// TestMigrations: a rerun applies nothing; a step added later is applied
// on the next open; a failing step leaves the schema as it was; a schema
// newer than the binary is refused.
func TestMigrations(t *testing.T) {
	url := pg.URL(t)
	db := open(t, url)
	want := allVersions(t)
	// Reopening the database, or migrating it again, applies nothing.
	open(t, url)
	if err := db.migrate(t.Context(), mustLoad(t, migrationFiles)); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if diff := cmp.Diff(want, schemaVersions(t, db)); diff != "" {
		t.Errorf("after a rerun (-want +got):\n%s", diff)
	}

	n := len(want)
	later := fstest.MapFS{}
	for _, m := range mustLoad(t, migrationFiles) {
		later[fmt.Sprintf("migrations/%04d_%s.sql", m.Version, m.Name)] = &fstest.MapFile{Data: []byte(m.SQL)}
	}
	bad := fstest.MapFS{}
	for k, v := range later {
		bad[k] = v
	}
	bad[fmt.Sprintf("migrations/%04d_broken.sql", n+1)] = &fstest.MapFile{Data: []byte(`ALTER TABLE tasks ADD COLUMN half TEXT; SELECT no_such_function();`)}
	err := db.migrate(t.Context(), mustLoad(t, bad))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("migration %04d_broken", n+1)) {
		t.Fatalf("a failing migration: err = %v, want one naming it", err)
	}
	var cols int
	if err := db.pool.QueryRow(t.Context(), `SELECT count(*) FROM information_schema.columns WHERE table_name = 'tasks' AND column_name = 'half'`).Scan(&cols); err != nil {
		t.Fatal(err)
	}
	if cols != 0 {
		t.Error("a failing migration left half its changes in the schema")
	}

	later[fmt.Sprintf("migrations/%04d_notes.sql", n+1)] = &fstest.MapFile{Data: []byte(`ALTER TABLE tasks ADD COLUMN notes TEXT NOT NULL DEFAULT '';`)}
	if err := db.migrate(t.Context(), mustLoad(t, later)); err != nil {
		t.Fatalf("a migration added later: %v", err)
	}
	if diff := cmp.Diff(append(want, n+1), schemaVersions(t, db)); diff != "" {
		t.Errorf("after a migration added later (-want +got):\n%s", diff)
	}
	// The binary's own migrations are now older than the database.
	err = db.migrate(t.Context(), mustLoad(t, migrationFiles))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at version %d but this cadre knows only up to %d", n+1, n)) {
		t.Errorf("a newer schema: err = %v, want a refusal naming both versions", err)
	}
}

func mustLoad(t *testing.T, fsys fs.FS) []migration.Step {
	t.Helper()
	ms, err := migration.Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// TestGetSessions: the records of the ids that have one, in one query;
// an unknown id is simply absent.
func TestGetSessions(t *testing.T) {
	db := open(t, pg.URL(t))
	for _, id := range []string{"s1", "s2", "s3"} {
		if err := db.CreateSession(t.Context(), info(id)); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.GetSessions(t.Context(), []string{"s1", "s3", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["s1"].ID != "s1" || got["s3"].ID != "s3" {
		t.Fatalf("GetSessions(s1, s3, nope) = %v, want s1 and s3", got)
	}
}

// TestPlanCacheMode: the store's connections plan each prepared statement
// once (PlanCacheMode), River's keep the server's default, and a URL that
// sets plan_cache_mode is obeyed.
func TestPlanCacheMode(t *testing.T) {
	url := pg.URL(t)
	show := func(p *pgxpool.Pool) string {
		t.Helper()
		var mode string
		if err := p.QueryRow(t.Context(), "SHOW plan_cache_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		return mode
	}
	db := open(t, url)
	if got := show(db.Pool()); got != PlanCacheMode {
		t.Errorf("the store's pool: plan_cache_mode = %s, want %s", got, PlanCacheMode)
	}
	if got := show(db.river); got != "auto" {
		t.Errorf("River's pool: plan_cache_mode = %s, want the default, auto", got)
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	if got := show(open(t, url+sep+"plan_cache_mode=force_custom_plan").Pool()); got != "force_custom_plan" {
		t.Errorf("with plan_cache_mode in the URL: %s, want force_custom_plan", got)
	}
}
