package cadre_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
	"github.com/cadre-dev/cadre/internal/testkit/pgstore"
)

// TestPostgresRecoveryByHeartbeats: with a PostgreSQL store, start-up
// recovery judges other processes by their node records, not by lock
// files under this CADRE_HOME: the task of a node on another machine
// that heartbeats (no lock file here) keeps running, the task of a node
// silent for the orphan timeout is failed as lost, and so is at once that
// of a node which was a process of this CADRE_HOME (its lock file is
// here, free: it crashed) though its heartbeat is recent. The runtime is a node
// itself: it records itself, and that it left when it closes.
func TestPostgresRecoveryByHeartbeats(t *testing.T) {
	url := pg.URL(t)
	db := pgstore.Open(t, url)
	ctx := t.Context()
	for _, id := range []string{"elsewhere-live", "elsewhere-dead", "here-crashed"} {
		if err := db.RegisterNode(ctx, id, "another-machine", 1); err != nil {
			t.Fatal(err)
		}
		tk := tasktest.Sample("task-of-" + id)
		tk.Owner, tk.Created, tk.Heartbeat = id, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)
		if err := db.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE nodes SET heartbeat_at = now() - interval '1 hour' WHERE id = 'elsewhere-dead'`); err != nil {
		t.Fatal(err)
	}

	f := newFixture(t)
	if err := os.MkdirAll(filepath.Join(f.home, "run"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.home, "run", "here-crashed.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	rt, err := f.openWith(t, map[string]string{"CADRE_STORE_URL": url})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := rt.Tasks(ctx, "", 0) // waits for start-up recovery
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tk := range ts {
		got[tk.ID] = string(tk.Status) + " " + tk.Error
	}
	if s := got["task-of-elsewhere-live"]; s != "running " {
		t.Errorf("the live remote node's task: %q, want it still running", s)
	}
	if s := got["task-of-elsewhere-dead"]; !strings.HasPrefix(s, "failed executor lost: node elsewhere-dead sent no heartbeat for 3") {
		t.Errorf("the silent node's task: %q, want it failed as lost", s)
	}

	if s := got["task-of-here-crashed"]; s != "failed executor lost: node here-crashed ended before the task finished" {
		t.Errorf("the crashed local node's task: %q, want it failed at once", s)
	}

	// This runtime's own node record: there, then left.
	self := func() (postgres.Node, bool) {
		var id string
		err := db.Pool().QueryRow(ctx, `SELECT id FROM nodes WHERE id NOT IN ('elsewhere-live', 'elsewhere-dead', 'here-crashed')`).Scan(&id)
		if err != nil {
			return postgres.Node{}, false
		}
		_, nodes, err := db.Nodes(ctx, []string{id})
		return nodes[id], err == nil
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		if n, ok := self(); ok && n.Left.IsZero() {
			break
		}
		select {
		case <-wctx.Done():
			t.Fatal("the runtime never recorded its node")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if n, ok := self(); !ok || n.Left.IsZero() {
		t.Errorf("after Close the runtime's node record is %+v (found %v), want it to say it left", n, ok)
	}
	if tk, _ := db.GetTask(ctx, "task-of-elsewhere-live"); tk.Status != task.StatusRunning {
		t.Errorf("after Close the live remote node's task is %s", tk.Status)
	}
}
