package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

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
	sid := runOnPostgres(t, e)

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

// TestPostgresTranscriptsFromAnotherHome: with CADRE_STORE_URL set,
// transcripts and task output live in PostgreSQL, so a process with
// another CADRE_HOME (another machine) shows the conversation, shows the
// background child's output and resumes the session; and no transcript or
// output file is written under either home.
func TestPostgresTranscriptsFromAnotherHome(t *testing.T) {
	const useID = "toolu_bg_pgtx"
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "BG-RESULT-PGTX: the number is 42"}
		case c.has("RESUME-MARKER") && c.has("BG-RESULT-PGTX"):
			return testkit.Reply{Text: "RESUMED-ANSWER: it was 42."}
		case c.has("RESUME-MARKER"):
			return testkit.Reply{Text: "RESUMED-ANSWER: I have no history."}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "MAIN-ANSWER: done."}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall(useID, "find the number", "BG-MARKER: find it")}}
		}
		return testkit.Reply{Text: "Launched it; waiting."}
	}))
	sid := runOnPostgres(t, e)

	// Another node: the same store, nothing else shared. The first home
	// is moved away meanwhile, so that no file of it can be read by path.
	away := e.home + ".away"
	if err := os.Rename(e.home, away); err != nil {
		t.Fatal(err)
	}
	other := *e
	other.home = t.TempDir()
	other.vars = append(slices.Clone(e.vars), "CADRE_HOME="+other.home)

	show := ok(t, other.run("", "sessions", "show", sid))
	for _, want := range []string{"find the number in the background", "MAIN-ANSWER: done.", "BG-RESULT-PGTX", "transcript postgres:transcripts/" + sid} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("cadre sessions show from another home does not show %q:\n%s", want, show.stdout)
		}
	}
	ts := cliTasks(t, &other)
	if len(ts) != 1 || ts[0].Status != task.StatusCompleted {
		t.Fatalf("cadre tasks from another home: %+v; want the one background task, completed", ts)
	}
	if ts[0].OutputFile != "" {
		t.Errorf("the task names an output file %q; in PostgreSQL mode its output is its transcript", ts[0].OutputFile)
	}
	out := ok(t, other.run("", "tasks", "output", ts[0].ID))
	for _, want := range []string{"[message] BG-MARKER: find it", "BG-RESULT-PGTX: the number is 42", "[completed]"} {
		if !strings.Contains(out.stdout, want) {
			t.Errorf("cadre tasks output from another home does not show %q:\n%s", want, out.stdout)
		}
	}

	p := ok(t, other.run("", "-p", "RESUME-MARKER: what was the number?", "--resume", sid, "--model", sonnet, "--output-format", "stream-json"))
	if res := finalResult(t, p.stdout); res["result"] != "RESUMED-ANSWER: it was 42." || res["session_id"] != sid {
		t.Fatalf("--resume from another home: %v; want the session continued with its history", res)
	}
	// Back on the first node, the resumed turn is there.
	if err := os.Rename(away, e.home); err != nil {
		t.Fatal(err)
	}
	if show := ok(t, e.run("", "sessions", "show", sid)); !strings.Contains(show.stdout, "RESUMED-ANSWER: it was 42.") {
		t.Errorf("the first home does not see the turn resumed on the other:\n%s", show.stdout)
	}

	for _, home := range []string{e.home, other.home} {
		for _, dir := range []string{"sessions", "tasks"} {
			filepath.WalkDir(filepath.Join(home, dir), func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					t.Errorf("PostgreSQL mode wrote %s", path)
				}
				return nil
			})
		}
	}
}

// TestPostgresKilledWriterResumedElsewhere: the one-writer claim on a
// transcript in PostgreSQL holds across machines, and outlives its
// process only until the process's node is judged gone: while a run is
// in progress, --resume from another CADRE_HOME is refused as in use;
// once the run's process is SIGKILLed and its node has been silent for
// the orphan timeout (heartbeat 1 s, orphan 5 s here), the other home
// resumes it with the history the killed run had written, and not before.
func TestPostgresKilledWriterResumedElsewhere(t *testing.T) {
	h, arrived := counting(func(n int, req testkit.Request) testkit.Reply {
		switch n {
		case 1:
			return testkit.Reply{Text: "Let me read it.", ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": "notes.txt"}}}}
		case 2:
			// Held until the test ends: the process is killed waiting for it.
			return testkit.Reply{Text: "never sent", Wait: heldForever()}
		}
		return readThenAnswer(req)
	})
	e, srv := anthropicEnv(t, h)
	e.set("CADRE_STORE_URL=" + pg.URL(t))
	other := *e
	other.home = t.TempDir()
	other.vars = append(slices.Clone(e.vars), "CADRE_HOME="+other.home)
	const settings = `{"store": {"heartbeatSeconds": 1, "orphanAfterSeconds": 5}}`
	for _, home := range []string{e.home, other.home} {
		if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settings), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	r := e.start("-p", secretAsk, "--model", sonnet, "--output-format", "stream-json")
	waitRequest(t, arrived, 2)
	list := listSessions(t, &other)
	if len(list) != 1 {
		t.Fatalf("sessions seen from the other home: %+v, want the one running", list)
	}
	id := list[0].ID
	if p := other.run("", "-p", "Go on.", "--model", sonnet, "--resume", id); p.code == 0 || !strings.Contains(p.stderr, "is in use by") {
		t.Fatalf("--resume from another home while the run is in progress: exit %d, stderr %q; want it refused as in use", p.code, p.stderr)
	}

	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r.wait(t, 10*time.Second)
	// The claim stays on the transcript's row: the other home is told the
	// session is in use until the killed process's node has been silent
	// for the orphan timeout (5 s, counted from its last heartbeat, at
	// most 1 s before the kill), then takes it over.
	var (
		p       proc
		refused int
	)
	deadline := time.Now().Add(30 * time.Second)
	for {
		p = other.run("", "-p", "Go on.", "--model", sonnet, "--output-format", "stream-json", "--resume", id)
		if p.code == 0 || !strings.Contains(p.stderr, "in use") || time.Now().After(deadline) {
			break
		}
		refused++
	}
	ok(t, p)
	// The kill itself released nothing: the first try, right after it,
	// came well within the 5 s of silence the claim is kept for.
	if refused == 0 {
		t.Errorf("--resume succeeded at its first try right after the kill; want it refused until the node is silent for 5 s")
	}
	if got := sessionID(t, p); got != id {
		t.Errorf("resumed as %s, want %s", got, id)
	}
	reqs := srv.Requests()
	var seen []string
	for _, m := range messagesOf(t, reqs[len(reqs)-1]) {
		seen = append(seen, string(m.Content))
	}
	if all := strings.Join(seen, "\n"); !strings.Contains(all, secretAsk) || !strings.Contains(all, "PAPAYA") || !strings.Contains(all, "Go on.") {
		t.Errorf("the resumed run's request lacks the killed run's history:\n%s", all)
	}
}

// TestPostgresStopFromAnotherHome (issue 14, acceptance 3): process A runs
// a -p session whose background child never finishes by itself; process
// B, with a CADRE_HOME of its own and the same CADRE_STORE_URL, runs
// `cadre tasks stop`: the task ends killed, its parent is told, and A
// finishes normally.
func TestPostgresStopFromAnotherHome(t *testing.T) {
	const useID = "toolu_pg_stop"
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "never sent", Wait: heldForever()}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "MAIN-ANSWER: it was stopped."}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall(useID, "endless job", "PG-STOP-MARKER: never finish")}}
		}
		return testkit.Reply{Text: "Launched it; waiting."}
	}))
	url := pg.URL(t)
	e.set("CADRE_STORE_URL=" + url)
	r := e.start("-p", "start an endless job", "--model", sonnet, "--output-format", "stream-json")
	var id string
	bgEventually(t, "the main agent's request after the launch", func() bool {
		mains, _ := bgCalls(srv)
		if len(mains) < 2 {
			return false
		}
		id = mains[1].launchedID()
		return id != ""
	})
	b := newEnv(t).set("CADRE_STORE_URL="+url, "ANTHROPIC_API_KEY=x")
	if rec := cliTask(t, b, id); rec.Status != task.StatusRunning {
		t.Fatalf("process B sees the task %s, want running", rec.Status)
	}
	stop := ok(t, b.run("", "tasks", "stop", id))
	if !strings.Contains(stop.stdout, "Asked the process running task "+id) {
		t.Errorf("cadre tasks stop in process B said %q", stop.stdout)
	}
	p := r.wait(t, 30*time.Second)
	if p.code != 0 {
		t.Fatalf("process A: exit %d\nstderr: %s", p.code, p.stderr)
	}
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: it was stopped." {
		t.Errorf("process A's final result %v", res)
	}
	mains, _ := bgCalls(srv)
	last := mains[len(mains)-1]
	if ns := last.notifications(); len(ns) != 1 {
		t.Fatalf("%d notifications, want 1:\n%s", len(ns), last.dump())
	} else {
		checkBGNotification(t, ns[0], id, useID, "killed", "was stopped")
	}
	if rec := cliTask(t, b, id); rec.Status != task.StatusKilled {
		t.Errorf("process B sees the task %s after the stop, want killed", rec.Status)
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

// runOnPostgres points e at a fresh PostgreSQL database and runs the
// prompt whose main agent starts one background child and answers
// "MAIN-ANSWER: done." once told of it; it returns the main session's id.
func runOnPostgres(t *testing.T, e *env) string {
	t.Helper()
	e.set("CADRE_STORE_URL=" + pg.URL(t))
	p := ok(t, e.run("", "-p", "find the number in the background", "--model", sonnet, "--output-format", "stream-json"))
	res := finalResult(t, p.stdout)
	sid, _ := res["session_id"].(string)
	if res["result"] != "MAIN-ANSWER: done." || sid == "" {
		t.Fatalf("final result %v", res)
	}
	return sid
}
