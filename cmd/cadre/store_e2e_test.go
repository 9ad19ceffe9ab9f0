package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/pgtest"
)

// pg is a throwaway PostgreSQL server, started by the first test that asks
// for a database; TestMain stops it.
var pg pgtest.Server

// TestPostgresStoreAcrossProcesses: with CADRE_STORE_URL set, a -p run
// with a background subagent records its session and task in PostgreSQL:
// later processes (cadre sessions, cadre tasks) list them, completed, and
// no SQLite file is ever created under CADRE_HOME.
func TestPostgresStoreAcrossProcesses(t *testing.T) {
	const useID = "toolu_bg_pg"
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "BG-RESULT-PG"}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "MAIN-ANSWER: done."}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall(useID, "find the number", "BG-MARKER: find it")}}
		}
		return testkit.Reply{Text: "Launched it; waiting."}
	}))
	e.set("CADRE_STORE_URL=" + pg.URL(t))
	p := ok(t, e.run("", "-p", "find the number in the background", "--model", sonnet, "--output-format", "stream-json"))
	res := finalResult(t, p.stdout)
	sid, _ := res["session_id"].(string)
	if res["result"] != "MAIN-ANSWER: done." || sid == "" {
		t.Fatalf("final result %v", res)
	}

	var main *session.Info
	for _, s := range listSessions(t, e) {
		if s.ID == sid {
			main = &s
		}
	}
	if main == nil || main.Status != session.StatusCompleted {
		t.Fatalf("cadre sessions from another process: main session %s is %+v, want it listed completed", sid, main)
	}
	ts := cliTasks(t, e)
	if len(ts) != 1 || ts[0].Status != task.StatusCompleted || !ts[0].Notified || !strings.Contains(ts[0].Result, "BG-RESULT-PG") || ts[0].ToolUseID != useID {
		t.Fatalf("cadre tasks from another process: %+v; want the one background task, completed and notified", ts)
	}
	if m, _ := filepath.Glob(filepath.Join(e.home, "cadre.db*")); len(m) > 0 {
		t.Errorf("the PostgreSQL store created %v", m)
	}
}

// TestPostgresStoreBadURL: an unusable CADRE_STORE_URL stops cadre at
// start with one clear line naming the variable, and never shows the
// password.
func TestPostgresStoreBadURL(t *testing.T) {
	e := newEnv(t).set("CADRE_STORE_URL=postgres://u:hunter2@127.0.0.1:1/cadre?sslmode=disable", "ANTHROPIC_API_KEY=x")
	p := e.run("", "sessions")
	failsWith(t, p, "CADRE_STORE_URL", "127.0.0.1:1", "connection refused")
	if strings.Contains(p.stderr, "hunter2") {
		t.Errorf("stderr shows the password: %s", p.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, "cadre.db")); err == nil {
		t.Error("a failed start in PostgreSQL mode created cadre.db")
	}
}
