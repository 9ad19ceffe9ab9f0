//go:build unix

package subagent

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/testkit/proctest"
	"github.com/cadre-dev/cadre/tool"
)

// shellTools are the tools a caller gets for its background commands: the
// real Bash bound to its Shells, and its task tools, in one set (so that
// the aliases BashOutput and KillShell resolve as in a loop).
func (h *harness) shellTools(c Caller, o builtin.Options) *tool.Set {
	h.t.Helper()
	tools := h.svc.BindShells(c, []tool.Tool{builtin.Bash(o)})
	switch h.surface {
	case "harness":
		tools = append(tools, h.allTools(c, "harness")...)
	default:
		for _, t := range h.profileTools(c, "claude") {
			if t.Info().Name != "Agent" { // the task tools alone
				tools = append(tools, t)
			}
		}
	}
	set, err := tool.NewSet(tools...)
	if err != nil {
		h.t.Fatal(err)
	}
	return set
}

// useTool calls the tool named name (an alias too) of set as the loop would:
// the input checked against its schema first.
func useTool(t *testing.T, set *tool.Set, c Caller, toolUseID, name string, in any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Validate(name, raw); err != nil {
		t.Fatalf("%s %s: %v", name, raw, err)
	}
	tl, ok := set.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	res, err := tl.Call(context.Background(), tool.Env{Cwd: c.Cwd, SessionID: c.SessionID, ToolUseID: toolUseID}, raw)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// background starts command with run_in_background and returns its id.
func background(t *testing.T, set *tool.Set, c Caller, toolUseID, command string) string {
	t.Helper()
	res := useTool(t, set, c, toolUseID, "Bash", map[string]any{"command": command, "run_in_background": true, "description": "test command"})
	meta, ok := res.Meta.(builtin.BashMeta)
	if res.IsError || !ok || meta.BackgroundTaskID == "" {
		t.Fatalf("Bash run_in_background = %q (error %v, meta %#v), want a task id", resultText(res), res.IsError, res.Meta)
	}
	if !strings.Contains(resultText(res), meta.BackgroundTaskID) {
		t.Errorf("the result %q does not name the id %s", resultText(res), meta.BackgroundTaskID)
	}
	return meta.BackgroundTaskID
}

// fifo makes a named pipe in dir.
func fifo(t *testing.T, dir, name string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// nextNotification waits for the next entry queued for target.
func (h *harness) nextNotification(target string) queue.Entry {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	es, err := h.svc.cfg.Queue.Wait(ctx, target, nil)
	if err != nil || len(es) == 0 {
		h.t.Fatalf("no notification within %v (%v)", waitFor, err)
	}
	if len(es) != 1 {
		h.t.Fatalf("%d entries queued, want one notification: %+v", len(es), es)
	}
	return es[0]
}

// awaitDone waits until task id is no longer in progress in this process.
func (h *harness) awaitDone(id string) {
	h.t.Helper()
	lt := h.svc.live(id)
	if lt == nil {
		return
	}
	select {
	case <-lt.Done():
	case <-time.After(waitFor):
		h.t.Fatalf("task %s did not end within %v", id, waitFor)
	}
}

// The acceptance scenario, in the service: the call returns while the
// command still runs (it waits on a pipe nobody has written), then exactly
// one notification arrives with exit code 0 and the output.
func TestShellNotifiesOnceWithExitCodeAndOutput(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	set := h.shellTools(c, builtin.Options{})
	var events []event.Event
	sub := h.bus.Subscribe(func(e event.Event) bool { return e.Task != nil })
	defer sub.Close()
	gate := fifo(t, h.dir, "gate")

	id := background(t, set, c, "toolu_bg", "read x < gate; echo done")
	rec, err := h.svc.cfg.Tasks.GetTask(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Kind != task.KindLocalBash || rec.Status != task.StatusRunning || rec.Owner != "process-a" || rec.RootSessionID != h.mainID || rec.ToolUseID != "toolu_bg" {
		t.Errorf("record while it runs = %+v", rec)
	}
	if !c.Group.HasRunning(c.AgentID) || c.Group.BackgroundRunning() != 1 {
		t.Errorf("the main agent's group counts %d background runs, want 1 (a headless run waits for it)", c.Group.BackgroundRunning())
	}
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()

	e := h.nextNotification("")
	body := e.Message.Text()
	for _, want := range []string{"<task-id>" + id + "</task-id>", "<status>completed</status>", "<exit-code>0</exit-code>", "done", "<tool-use-id>toolu_bg</tool-use-id>", `Background command "test command" completed (exit code 0)`} {
		if !strings.Contains(body, want) {
			t.Errorf("notification lacks %q:\n%s", want, body)
		}
	}
	if e.Mode != queue.ModeNotification || e.TaskID != id {
		t.Errorf("entry = %+v", e)
	}
	h.awaitDone(id)
	if n := h.svc.cfg.Queue.Len(""); n != 0 {
		t.Errorf("%d more entries queued after the notification", n)
	}
	rec, _ = h.svc.cfg.Tasks.GetTask(context.Background(), id)
	if rec.Status != task.StatusCompleted || !rec.Notified || rec.Finished.IsZero() || !strings.Contains(rec.Result, "done") {
		t.Errorf("record at the end = %+v", rec)
	}
	// task_started (local_bash, backgrounded, no agent type) and
	// task_notification, for stream-json.
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for ev := range sub.Events(ctx) {
		events = append(events, ev)
		if ev.Subtype == event.SubtypeTaskNotification {
			break
		}
	}
	if len(events) != 2 || events[0].Subtype != event.SubtypeTaskStarted || events[1].Subtype != event.SubtypeTaskNotification {
		t.Fatalf("task events = %+v", events)
	}
	if s := events[0].Task; s.Kind != "local_bash" || !s.Background || s.AgentType != "" || s.TaskID != id {
		t.Errorf("task_started = %+v", s)
	}
	if n := events[1].Task; n.Status != "completed" || n.OutputFile != rec.OutputFile {
		t.Errorf("task_notification = %+v", n)
	}
}

// shellPid starts a background command that writes its shell's pid (its
// process group) to a pipe, then runs rest; it returns the id and pid.
func shellPid(t *testing.T, h *harness, set *tool.Set, c Caller, rest string) (string, int) {
	t.Helper()
	pipe := fifo(t, h.dir, "pid")
	id := background(t, set, c, "toolu_pid", "echo $$ > pid; "+rest)
	f, err := os.Open(pipe)
	if err != nil {
		t.Fatal(err)
	}
	line, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil {
		t.Fatalf("pid %q: %v", line, err)
	}
	return id, pid
}

// TaskStop (and its alias KillShell) kills the command's whole process
// group, what it started in the background included.
func TestShellStopKillsProcessGroup(t *testing.T) {
	for _, tc := range []struct {
		tool string
		in   func(id string) map[string]any
	}{
		{"TaskStop", func(id string) map[string]any { return map[string]any{"task_id": id} }},
		{"KillShell", func(id string) map[string]any { return map[string]any{"shell_id": id} }},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			h := newHarness(t, setup{})
			c := h.mainCaller()
			set := h.shellTools(c, builtin.Options{})
			id, pgid := shellPid(t, h, set, c, "sleep 60 & sleep 60")
			if !proctest.GroupAlive(pgid) {
				t.Fatalf("process group %d is not running", pgid)
			}
			res := useTool(t, set, c, "toolu_stop", tc.tool, tc.in(id))
			if res.IsError || !strings.Contains(resultText(res), "Stopped task "+id) {
				t.Fatalf("%s = %q", tc.tool, resultText(res))
			}
			proctest.WaitGroupGone(t, pgid, waitFor)
			rec, _ := h.svc.cfg.Tasks.GetTask(context.Background(), id)
			if rec.Status != task.StatusKilled {
				t.Errorf("status %s, want killed", rec.Status)
			}
			if body := h.nextNotification("").Message.Text(); !strings.Contains(body, "<status>killed</status>") || strings.Contains(body, "<exit-code>") {
				t.Errorf("notification of a stopped command:\n%s", body)
			}
			again := useTool(t, set, c, "toolu_stop2", tc.tool, tc.in(id))
			if !again.IsError || !strings.Contains(resultText(again), "not running") {
				t.Errorf("stopping it again = %q, want an error", resultText(again))
			}
		})
	}
}

// The end of the session (its group stopped: the conversation's end, the
// runtime's Close) kills its background commands.
func TestShellDiesWithItsSession(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	set := h.shellTools(c, builtin.Options{})
	id, pgid := shellPid(t, h, set, c, "sleep 60 & sleep 60")
	h.group.Stop(runs.ErrSessionStopped)
	h.group.Wait()
	if proctest.GroupAlive(pgid) {
		proctest.WaitGroupGone(t, pgid, waitFor)
	}
	rec, _ := h.svc.cfg.Tasks.GetTask(context.Background(), id)
	if rec.Status != task.StatusKilled {
		t.Errorf("status %s, want killed", rec.Status)
	}
	// A stopping session starts nothing more.
	res := useTool(t, set, c, "toolu_late", "Bash", map[string]any{"command": "true", "run_in_background": true})
	if !res.IsError {
		t.Errorf("a background command started in a stopped session: %q", resultText(res))
	}
}

// TaskOutput that waits for the end takes it over: it shows the exit code
// and output, and no notification follows. Reading again shows the output
// again (a command's output is read, not delivered once).
func TestShellTaskOutputTakesTheEnd(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	set := h.shellTools(c, builtin.Options{})
	id := background(t, set, c, "toolu_bg", "echo one; exit 3")
	res := useTool(t, set, c, "toolu_out", "TaskOutput", map[string]any{"task_id": id, "timeout": int(waitFor.Milliseconds())})
	got := resultText(res)
	for _, want := range []string{"<status>failed</status>", "<exit_code>3</exit_code>", "one"} {
		if !strings.Contains(got, want) {
			t.Errorf("TaskOutput lacks %q:\n%s", want, got)
		}
	}
	h.awaitDone(id)
	if n := h.svc.cfg.Queue.Len(""); n != 0 {
		t.Errorf("%d notifications queued after TaskOutput showed the end", n)
	}
	if rec, _ := h.svc.cfg.Tasks.GetTask(context.Background(), id); !rec.Notified || rec.Error != "exit code 3" {
		t.Errorf("record = %+v", rec)
	}
	if again := resultText(useTool(t, set, c, "toolu_out2", "TaskOutput", map[string]any{"task_id": id})); !strings.Contains(again, "one") {
		t.Errorf("a second read lost the output:\n%s", again)
	}
}

// BashOutput, TaskOutput's old name for commands, takes bash_id and a
// regular expression that keeps only the lines it matches; it does not
// wait.
func TestBashOutputFilter(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	set := h.shellTools(c, builtin.Options{})
	id := background(t, set, c, "toolu_bg", "seq 1 30")
	h.nextNotification("")
	h.awaitDone(id)
	got := resultText(useTool(t, set, c, "toolu_out", "BashOutput", map[string]any{"bash_id": id, "filter": "^1[0-9]$"}))
	_, out, _ := strings.Cut(got, "<output>\n")
	out, _, _ = strings.Cut(out, "\n</output>")
	var want []string
	for i := 10; i <= 19; i++ {
		want = append(want, strconv.Itoa(i))
	}
	if out != strings.Join(want, "\n") {
		t.Errorf("filtered output = %q, want 10…19", out)
	}
	bad := useTool(t, set, c, "toolu_bad", "BashOutput", map[string]any{"bash_id": id, "filter": "("})
	if !bad.IsError || !strings.Contains(resultText(bad), "regular expression") {
		t.Errorf("a bad filter = %q", resultText(bad))
	}
	// A running command: BashOutput looks without waiting.
	fifo(t, h.dir, "gate")
	running := background(t, set, c, "toolu_bg2", "echo started; read x < gate")
	look := resultText(useTool(t, set, c, "toolu_look", "BashOutput", map[string]any{"bash_id": running}))
	if !strings.Contains(look, "<status>running</status>") {
		t.Errorf("BashOutput on a running command:\n%s", look)
	}
	useTool(t, set, c, "toolu_stop", "TaskStop", map[string]any{"task_id": running})
}

// The bound comes from the settings (Config.ShellMaxOutputBytes) and holds
// for a real command's output.
func TestShellOutputBoundFromSettings(t *testing.T) {
	h := newHarness(t, setup{})
	h.svc.cfg.ShellMaxOutputBytes = 4096
	h.svc.rewire()
	c := h.mainCaller()
	set := h.shellTools(c, builtin.Options{})
	id := background(t, set, c, "toolu_bg", "seq 1 20000")
	body := h.nextNotification("").Message.Text()
	h.awaitDone(id)
	rec, _ := h.svc.cfg.Tasks.GetTask(context.Background(), id)
	fi, err := os.Stat(rec.OutputFile)
	if err != nil || fi.Size() > 4096 {
		t.Fatalf("output file %v bytes (%v), want at most 4096", fi.Size(), err)
	}
	b, _ := os.ReadFile(rec.OutputFile)
	if !strings.HasPrefix(string(b), "[cadre: ") || !strings.HasSuffix(string(b), "\n20000\n") {
		t.Errorf("output file does not hold the note and the newest output: %q…%q", b[:min(len(b), 80)], b[max(0, len(b)-20):])
	}
	if !strings.Contains(body, "20000") {
		t.Errorf("notification's tail lacks the last line:\n%s", body)
	}
}

// The harness profile's task_output and task_cancel reach a command by its
// task_<id> form.
func TestHarnessToolsReachShells(t *testing.T) {
	h := newHarness(t, setup{subagents: config.Subagents{Surface: "harness"}})
	c := h.mainCaller()
	set := h.shellTools(c, builtin.Options{})
	id, pgid := shellPid(t, h, set, c, "echo hello; sleep 60")
	out := resultText(useTool(t, set, c, "toolu_out", "task_output", map[string]any{"task_id": "task_" + id, "block": false}))
	for _, want := range []string{"task_id: task_" + id, "task_type: local_bash", "status: running"} {
		if !strings.Contains(out, want) {
			t.Errorf("task_output lacks %q:\n%s", want, out)
		}
	}
	res := useTool(t, set, c, "toolu_cancel", "task_cancel", map[string]any{"task_id": "task_" + id})
	if !strings.Contains(resultText(res), "status: cancelled") {
		t.Errorf("task_cancel = %q", resultText(res))
	}
	proctest.WaitGroupGone(t, pgid, waitFor)
	h.nextNotification("")
	if got := resultText(useTool(t, set, c, "toolu_out2", "task_output", map[string]any{"task_id": "task_" + id})); !strings.Contains(got, "status: cancelled") || !strings.Contains(got, "hello") {
		t.Errorf("task_output after the cancel:\n%s", got)
	}
}

// A command is not an agent: SendMessage to it is refused, not queued for
// nobody.
func TestSendMessageRefusesShells(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	set := h.shellTools(c, builtin.Options{})
	fifo(t, h.dir, "gate")
	id := background(t, set, c, "toolu_bg", "read x < gate")
	res := useTool(t, set, c, "toolu_send", "SendMessage", map[string]any{"to": id, "message": "hi", "summary": "say hi"})
	if !res.IsError || !strings.Contains(resultText(res), "background command, not an agent") {
		t.Errorf("SendMessage to a command = %q", resultText(res))
	}
	useTool(t, set, c, "toolu_stop", "TaskStop", map[string]any{"task_id": id})
}

// A Bash with no Shells (a tool outside any agent) refuses to background.
func TestBashWithoutShellsRefusesBackground(t *testing.T) {
	res, err := builtin.Bash(builtin.Options{}).Call(context.Background(), tool.Env{Cwd: t.TempDir()}, json.RawMessage(`{"command":"true","run_in_background":true}`))
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "not available") {
		t.Errorf("= %q, %v", resultText(res), err)
	}
}

// A restart fails the shell tasks the ended process left running, as it
// fails agents' (task.Recover judges by owner).
func TestShellLeftRunningIsFailedOnRestart(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	set := h.shellTools(c, builtin.Options{})
	fifo(t, h.dir, "gate")
	id := background(t, set, c, "toolu_bg", "read x < gate")
	gone := func(rec task.Task) (string, bool) { return "owner " + rec.Owner + " ended", rec.Owner == "process-a" }
	changed, err := task.Sweep(context.Background(), h.svc.cfg.Tasks, gone, fixedNow)
	if err != nil || len(changed) != 1 || changed[0].ID != id || changed[0].Status != task.StatusFailed {
		t.Fatalf("Sweep = %+v, %v; want the shell task failed", changed, err)
	}
}

// A background command's timeout is how long it may run: past it, it is
// killed with its process group and ends with status timeout.
func TestShellTimeout(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	set := h.shellTools(c, builtin.Options{})
	res := useTool(t, set, c, "toolu_bg", "Bash", map[string]any{"command": "echo $$ > pid; sleep 60 & sleep 60", "run_in_background": true, "timeout": 300})
	id := res.Meta.(builtin.BashMeta).BackgroundTaskID
	body := h.nextNotification("").Message.Text()
	if !strings.Contains(body, "<status>timeout</status>") || strings.Contains(body, "<exit-code>") {
		t.Errorf("notification of a timed-out command:\n%s", body)
	}
	h.awaitDone(id)
	if rec, _ := h.svc.cfg.Tasks.GetTask(context.Background(), id); rec.Status != task.StatusTimeout {
		t.Errorf("status %s, want timeout", rec.Status)
	}
	b, err := os.ReadFile(filepath.Join(h.dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	proctest.WaitGroupGone(t, pgid, waitFor)
}
