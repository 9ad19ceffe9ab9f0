package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/postgres"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/pgstore"
)

// nodeOf waits until the process with pid has a node record and returns
// its id (node ids start with the pid).
func nodeOf(t *testing.T, db *postgres.DB, pid int) string {
	t.Helper()
	var id string
	bgEventually(t, fmt.Sprintf("a node record of process %d", pid), func() bool {
		err := db.Pool().QueryRow(t.Context(), `SELECT id FROM nodes WHERE id LIKE $1`, strconv.Itoa(pid)+"-%").Scan(&id)
		return err == nil
	})
	return id
}

// TestPostgresKilledNodesTaskFailsElsewhere is issue 14's acceptance: a
// cadre -p process (heartbeat 1 s) is SIGKILLed while its background
// child runs; a cadre serve process on another CADRE_HOME (a machine of
// its own, as far as files go) sharing the store marks the task failed,
// saying the node was lost, once the node has been silent for the orphan
// timeout (5 s) — and not before — and the killed run's sessions with it.
func TestPostgresKilledNodesTaskFailsElsewhere(t *testing.T) {
	const useID = "toolu_bg_lost"
	a, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "never sent", Wait: heldForever()}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall(useID, "long job", "LOST-MARKER: do the long job")}}
		}
		return testkit.Reply{Text: "Launched; waiting."}
	}))
	url := pg.URL(t)
	const settings = `{"store": {"heartbeatSeconds": 1, "orphanAfterSeconds": 5}}`
	b := newEnv(t)
	b.vars = append(b.vars, "CADRE_STORE_URL="+url)
	a.set("CADRE_STORE_URL=" + url)
	for _, e := range []*env{a, b} {
		if err := os.WriteFile(filepath.Join(e.home, "settings.json"), []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := pgstore.Open(t, url)

	// B first, and as River's leader: a leader killed would leave the
	// periodic sweep to wait for River's leader lease (15 s) to run out,
	// which docs/scaling.md's timeline counts separately.
	served := b.serve()
	bNode := nodeOf(t, db, served.cmd.Process.Pid)
	bgEventually(t, "cadre serve leading River", func() bool {
		var leader string
		err := db.Pool().QueryRow(t.Context(), `SELECT leader_id FROM river_leader`).Scan(&leader)
		return err == nil && leader == bNode
	})

	r := a.start("-p", "start a long job", "--model", sonnet, "--output-format", "stream-json")
	aNode := nodeOf(t, db, r.cmd.Process.Pid)
	bgEventually(t, "the child's request and the main agent's second request", func() bool {
		mains, children := bgCalls(srv)
		return len(children) == 1 && len(mains) == 2
	})
	ts, err := db.ListTasks(t.Context(), task.Filter{})
	if err != nil || len(ts) != 1 || ts[0].Status != task.StatusRunning || ts[0].Owner != aNode {
		t.Fatalf("before the kill: tasks %+v (%v); want one running, owned by node %s", ts, err, aNode)
	}
	id := ts[0].ID
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := r.wait(t, 10*time.Second)
	mainID := sessionID(t, killed)

	// Waiting on the store, with a deadline: the sweep runs every 2.5-3 s.
	var lost task.Task
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for {
		if lost, err = db.GetTask(ctx, id); err == nil && lost.Status.Terminal() {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the killed node's task is still %s: %v\ncadre serve's stderr:\n%s", lost.Status, err, served.stderr())
		case <-time.After(100 * time.Millisecond):
		}
	}
	m := regexp.MustCompile(`^executor lost: node ` + regexp.QuoteMeta(aNode) + ` sent no heartbeat for (\d+) seconds$`).FindStringSubmatch(lost.Error)
	if lost.Status != task.StatusFailed || m == nil || lost.Finished.IsZero() {
		t.Fatalf("the killed node's task: %s, %q, finished %v; want failed, executor lost", lost.Status, lost.Error, lost.Finished)
	}
	// The silence the sweep measured, by the database's clock: at least
	// the orphan timeout (nothing is failed early), at most that plus a
	// few heartbeats (the sweep period and its jitter, 3 s, and slack for
	// a loaded machine).
	n, _ := strconv.Atoi(m[1])
	t.Logf("the task failed after %d s of silence", n)
	if n < 5 || n > 5+10 {
		t.Errorf("failed after %d s of silence, want between 5 s (the orphan timeout) and 15 s", n)
	}
	// The sweep fails the sessions in a step after the tasks, so they are
	// waited for, not read at once.
	for _, sid := range []string{mainID, lost.ChildSessionID} {
		bgEventually(t, "session "+sid+" of the killed node failed", func() bool {
			s, err := db.GetSession(t.Context(), sid)
			return err == nil && s.Status == session.StatusFailed
		})
	}
	// What users see, from a process of either home.
	for _, e := range []*env{a, b} {
		if got := cliTask(t, e, id); got.Status != task.StatusFailed || !strings.HasPrefix(got.Error, "executor lost: node "+aNode) {
			t.Errorf("cadre tasks show from %s: %s %q", e.home, got.Status, got.Error)
		}
	}
	// The serving node is alive and well: its record is fresh, not left.
	_, nodes, err := db.Nodes(t.Context(), []string{bNode, aNode})
	if err != nil || !nodes[bNode].Left.IsZero() || !nodes[aNode].Left.IsZero() {
		t.Errorf("node records %+v, %v: neither says it left (one serves, one was killed)", nodes, err)
	}
}
