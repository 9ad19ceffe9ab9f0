//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit/proctest"
)

// Acceptance tests for background shells (issue 27, part 1): Bash with
// run_in_background through the real binary and the scripted model.

// shellLaunchPrefix starts the Bash result of a background command
// (internal/subagent/prompts/shell_launched.md); the id follows it. The
// scripted model has no regular expressions: it slices the id out.
const shellLaunchPrefix = "Command running in the background with ID: "

// shellIDTemplate is the scenario template that reads the id of the
// command started in the turn before.
var shellIDTemplate = fmt.Sprintf("{{slice .LastToolResult %d %d}}", len(shellLaunchPrefix), len(shellLaunchPrefix)+36)

// bashToolResults are the tool_result blocks of the run's user lines (not
// the notifications that arrive as user text).
func bashToolResults(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rs []map[string]any
	for _, r := range toolResults(t, out) {
		if r["type"] == "tool_result" {
			rs = append(rs, r)
		}
	}
	return rs
}

// streamLines finds the stream-json lines of a type and subtype.
func streamLines(t *testing.T, out, typ, subtype string) (found []map[string]any, at []int) {
	t.Helper()
	for i, l := range lines(t, out) {
		if l["type"] == typ && (subtype == "" || l["subtype"] == subtype) {
			found, at = append(found, l), append(at, i)
		}
	}
	return found, at
}

// tasksJSON is `cadre tasks --json` in e's state.
func tasksJSON(t *testing.T, e *env) []map[string]any {
	t.Helper()
	p := e.run("", "tasks", "--json")
	if p.code != 0 {
		t.Fatalf("cadre tasks --json: exit %d\n%s", p.code, p.stderr)
	}
	var ts []map[string]any
	if err := json.Unmarshal([]byte(p.stdout), &ts); err != nil {
		t.Fatalf("cadre tasks --json: %v\n%s", err, p.stdout)
	}
	return ts
}

// The acceptance scenario: a background `sleep 1; echo done` returns its
// id at once (its tool result comes before the command's end), and the
// headless run waits for it: the notification arrives with exit code 0
// and "done", as one more turn of the main agent.
func TestBackgroundShellNotifies(t *testing.T) {
	e := newEnv(t)
	e.write("s.yaml", `agents:
  main:
    - text: Starting it.
      tool_use:
        - name: Bash
          input: {command: "sleep 1; echo done", run_in_background: true, description: "wait a second, say done"}
    - text: Started; waiting for it.
    - text: "Notified: {{.LastUserText}}"
`)
	p := e.run("", "-p", "go", "--model", "script:s.yaml", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", p.code, p.stderr, p.stdout)
	}
	rs := bashToolResults(t, p.stdout)
	if len(rs) != 1 || rs[0]["is_error"] == true || !strings.HasPrefix(fmt.Sprint(rs[0]["content"]), shellLaunchPrefix) {
		t.Fatalf("Bash results = %v, want one naming the background id", rs)
	}
	id := fmt.Sprint(rs[0]["content"])[len(shellLaunchPrefix):][:36]

	started, startedAt := streamLines(t, p.stdout, "system", "task_started")
	if len(started) != 1 || started[0]["task_type"] != "local_bash" || started[0]["task_id"] != id || started[0]["is_backgrounded"] != true {
		t.Fatalf("task_started lines = %v", started)
	}
	if _, ok := started[0]["subagent_type"]; ok {
		t.Errorf("a shell's task_started names a subagent_type: %v", started[0])
	}
	ends, endAt := streamLines(t, p.stdout, "system", "task_notification")
	if len(ends) != 1 || ends[0]["task_id"] != id || ends[0]["status"] != "completed" {
		t.Fatalf("task_notification lines = %v", ends)
	}
	_, resultAt := streamLines(t, p.stdout, "user", "")
	if resultAt[0] > startedAt[0] && resultAt[0] < endAt[0] {
		// The tool result is written between the start and the end.
	} else {
		t.Errorf("the Bash result (line %d) does not come between task_started (line %d) and the command's end (line %d): it did not return at once", resultAt[0], startedAt[0], endAt[0])
	}
	changed, _ := streamLines(t, p.stdout, "system", "background_tasks_changed")
	if len(changed) == 0 || !strings.Contains(fmt.Sprint(changed[0]["tasks"]), "local_bash") {
		t.Errorf("background_tasks_changed lines = %v, want the shell listed", changed)
	}

	results, _ := streamLines(t, p.stdout, "result", "")
	final := fmt.Sprint(results[len(results)-1]["result"])
	for _, want := range []string{"Notified: <task-notification>", "<task-id>" + id + "</task-id>", "<status>completed</status>", "<exit-code>0</exit-code>", "done"} {
		if !strings.Contains(final, want) {
			t.Errorf("the final answer lacks %q:\n%s", want, final)
		}
	}
	if n := strings.Count(p.stdout, "<task-notification>"); n < 1 {
		t.Errorf("no notification in the output")
	}

	ts := tasksJSON(t, e)
	if len(ts) != 1 || ts[0]["id"] != id || ts[0]["kind"] != "local_bash" || ts[0]["status"] != "completed" || ts[0]["notified"] != true {
		t.Fatalf("cadre tasks --json = %v", ts)
	}
	out, err := os.ReadFile(fmt.Sprint(ts[0]["output_file"]))
	if err != nil || string(out) != "done\n" {
		t.Errorf("output file = %q, %v; want done", out, err)
	}
	if p := e.run("", "tasks", "output", id); p.code != 0 || !strings.HasPrefix(p.stdout, "done\n") || !strings.Contains(p.stdout, "completed (exit code 0)") {
		t.Errorf("cadre tasks output:\n%s%s", p.stdout, p.stderr)
	}
	if p := e.run("", "tasks"); p.code != 0 || !strings.Contains(p.stdout, id) || !strings.Contains(p.stdout, "shell") {
		t.Errorf("cadre tasks:\n%s%s", p.stdout, p.stderr)
	}
}

// TaskStop on a background `sleep 60` kills its process group: no process
// of it is left, the one it put in the background included.
func TestBackgroundShellStopLeavesNoProcess(t *testing.T) {
	e := newEnv(t)
	e.write("s.yaml", `agents:
  main:
    - text: Starting it.
      tool_use:
        - name: Bash
          input: {command: "sleep 60 & echo $$ > pgid.txt; sleep 60", run_in_background: true}
    - text: Stopping it once it is up.
      tool_use:
        - name: Bash
          input: {command: "timeout 20 sh -c 'until [ -s pgid.txt ]; do sleep 0.05; done'"}
        - name: TaskStop
          input: {task_id: "`+shellIDTemplate+`"}
    - text: Stopped.
    - text: "Told: {{.LastUserText}}"
`)
	began := time.Now()
	p := e.run("", "-p", "go", "--model", "script:s.yaml", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", p.code, p.stderr, p.stdout)
	}
	if took := time.Since(began); took > 50*time.Second {
		t.Errorf("the run took %v: the stop did not end the command", took)
	}
	rs := bashToolResults(t, p.stdout)
	if len(rs) != 3 || !strings.Contains(fmt.Sprint(rs[2]["content"]), "Stopped task") {
		t.Fatalf("tool results = %v, want the TaskStop to say it stopped the task", rs)
	}
	b, err := os.ReadFile(filepath.Join(e.dir, "pgid.txt"))
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	proctest.WaitGroupGone(t, pgid, 10*time.Second)
	ts := tasksJSON(t, e)
	if len(ts) != 1 || ts[0]["status"] != "killed" || ts[0]["kind"] != "local_bash" {
		t.Errorf("cadre tasks --json = %v", ts)
	}
}

// A background command is sandboxed exactly as a foreground one: it cannot
// write outside the workspace, and its notification names the refusal.
func TestSandboxBackgroundBashCannotEscape(t *testing.T) {
	e, home := sandboxEnv(t)
	e.write("s.yaml", `agents:
  main:
    - text: Starting it.
      tool_use:
        - name: Bash
          input: {command: "sh -c 'echo x > ~/escape; echo y > ./inside'", run_in_background: true}
    - text: Started.
    - text: "Told: {{.LastUserText}}"
`)
	p := e.run("", "-p", "go", "--model", "script:s.yaml", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", p.code, p.stderr, p.stdout)
	}
	mustAbsent(t, filepath.Join(home, "escape"), "a background command wrote outside the workspace")
	mustHold(t, filepath.Join(e.dir, "inside"), "y\n", "the background command's write inside the workspace")
	results, _ := streamLines(t, p.stdout, "result", "")
	final := fmt.Sprint(results[len(results)-1]["result"])
	want := "the sandbox refused writing " + filepath.Join(home, "escape") + " (outside the workspace)"
	if !strings.Contains(final, want) {
		t.Errorf("the notification does not name the refusal %q:\n%s", want, final)
	}
}

// The web view lists a session's background commands with its other
// background tasks, and stops one from the page.
func TestWebViewListsBackgroundShells(t *testing.T) {
	exe := chromiumExe(t)
	e := newEnv(t)
	e.write("scenario.yaml", `agents:
  main:
    - text: Starting the server.
      tool_use:
        - name: Bash
          input: {command: "echo up; sleep 60", run_in_background: true, description: "serve the site"}
    - text: It runs.
    - text: "Told: {{.LastUserText}}"
`)
	s := e.serve("--model", "script:scenario.yaml", "--allowedTools", "Bash")
	defer func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		<-s.done
	}()
	runID := s.startRun(t, "start the server")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := startBrowser(t, ctx, exe, 1400, 800)
	page := openSession(t, ctx, b, s, runID)
	const shown = `new Promise((resolve) => {
	  const row = () => document.querySelector('tr[data-kind="local_bash"]');
	  const ok = () => row() && row().querySelector(".status.s-running") && row().textContent.includes("echo up; sleep 60") && row().textContent.includes("serve the site");
	  if (ok()) return resolve(row().dataset.task);
	  new MutationObserver((_, obs) => { if (ok()) { obs.disconnect(); resolve(row().dataset.task); } })
	    .observe(document, {childList: true, subtree: true, attributes: true});
	})`
	var id string
	if err := page.Eval(ctx, shown, &id); err != nil {
		t.Fatalf("the page never listed the running background command: %v", err)
	}
	const stopped = `new Promise((resolve) => {
	  document.querySelector('tr[data-kind="local_bash"] button.danger').click();
	  const ok = () => document.querySelector('tr[data-kind="local_bash"] .status.s-killed');
	  if (ok()) return resolve(true);
	  new MutationObserver((_, obs) => { if (ok()) { obs.disconnect(); resolve(true); } })
	    .observe(document, {childList: true, subtree: true, attributes: true});
	})`
	if err := page.Eval(ctx, stopped, nil); err != nil {
		t.Fatalf("the stop on the page never showed the command killed: %v", err)
	}
	var rec struct{ Kind, Status string }
	getJSON(t, s.at("/api/tasks/"+id), &rec)
	if rec.Kind != "local_bash" || rec.Status != "killed" {
		t.Errorf("GET /api/tasks/%s = %+v", id, rec)
	}
}

// The TUI's /tasks lists a background command as a shell task, numbered
// apart from the subagents (s1), and "/tasks stop s1" stops it.
func TestTUITasksListsBackgroundShells(t *testing.T) {
	e := newEnv(t)
	e.write("s.yaml", `agents:
  main:
    - text: Starting the watcher.
      tool_use:
        - name: Bash
          input: {command: "sleep 60", run_in_background: true, description: "watch the tests"}
    - text: The watcher runs.
    - text: "Told: {{.LastUserText}}"
`)
	s := e.tui("--model", "script:s.yaml", "--allowedTools", "Bash")
	ask(s, "start the watcher")
	s.WaitFor("The watcher runs.", screenWait)
	ask(s, "/tasks")
	screen := s.WaitFor("/tasks output #N", screenWait)
	if rows := rowsWith(screen, "watch the tests"); len(rows) == 0 || !strings.Contains(rows[len(rows)-1], "shell") || !strings.Contains(rows[len(rows)-1], "running") {
		t.Errorf("/tasks does not list the background command as a running shell task:\n%s", screen)
	}
	// A shell command is no subagent: it has a number of its own.
	if rows := rowsWith(screen, "watch the tests"); len(rows) == 0 || !strings.HasPrefix(rows[len(rows)-1], "s1 ") {
		t.Errorf("/tasks does not number the background command s1:\n%s", screen)
	}
	ask(s, "/tasks stop s1")
	s.WaitFor("Stopped task", screenWait)
	s.WaitFor("Told: <task-notification>", screenWait)
}

// A cadre killed while its background command runs leaves the task
// running in the store; the next cadre to open it marks it failed, as it
// does an orphaned agent's. (The command itself, in a session of its own,
// is not killed by the crash: the test stops it.)
func TestBackgroundShellOfAKilledProcessIsFailedOnRestart(t *testing.T) {
	e := newEnv(t)
	e.write("s.yaml", `agents:
  main:
    - text: Starting it.
      tool_use:
        - name: Bash
          input: {command: "echo $$ > pgid.txt; sleep 60", run_in_background: true}
    - text: Started.
    - text: "Told: {{.LastUserText}}"
`)
	cmd := exec.Command(bin, "-p", "go", "--model", "script:s.yaml", "--permission-mode", "bypassPermissions")
	cmd.Dir, cmd.Env = e.dir, e.vars
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	kill := sync.OnceFunc(func() {
		cmd.Process.Kill()
		<-exited
	})
	defer kill()
	// Running: recorded (the record is written before the call returns)
	// and started (its first line ran).
	deadline := time.Now().Add(30 * time.Second)
	var pgid int
	for {
		b, _ := os.ReadFile(filepath.Join(e.dir, "pgid.txt"))
		pgid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if ts := tasksJSON(t, e); pgid > 0 && len(ts) == 1 && ts[0]["status"] == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background command was never recorded running")
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer syscall.Kill(-pgid, syscall.SIGKILL)
	kill()

	ts := tasksJSON(t, e)
	if len(ts) != 1 || ts[0]["kind"] != "local_bash" || ts[0]["status"] != "failed" || !strings.Contains(fmt.Sprint(ts[0]["error"]), "ended before it finished") {
		t.Errorf("after the restart: %v, want the shell task failed as orphaned", ts)
	}
}
