package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// piped is a cadre process speaking stream-json on its pipes, driven line by
// line as a program drives it.
type piped struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan map[string]any
	errb  *bytes.Buffer
	done  chan struct{}
}

func (e *env) startPiped(args ...string) *piped {
	e.t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = e.dir, e.vars
	in, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	l := &piped{t: e.t, cmd: cmd, in: in, lines: make(chan map[string]any, 256), errb: &bytes.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = l.errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		defer close(l.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			l.lines <- m
		}
	}()
	go func() { _ = cmd.Wait(); close(l.done) }()
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-l.done
	})
	return l
}

func (l *piped) send(v string) {
	l.t.Helper()
	if _, err := io.WriteString(l.in, v+"\n"); err != nil {
		l.t.Fatalf("write stdin: %v", err)
	}
}

func (l *piped) user(text string) {
	l.t.Helper()
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "parent_tool_use_id": nil, "session_id": ""})
	l.send(string(b))
}

// until reads lines until one satisfies match, and returns it.
func (l *piped) until(what string, match func(map[string]any) bool) map[string]any {
	l.t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-l.lines:
			if !ok {
				l.t.Fatalf("output ended waiting for %s", what)
			}
			if match(m) {
				return m
			}
		case <-deadline:
			l.t.Fatalf("no %s within 60s", what)
		}
	}
}

func isResult(m map[string]any) bool { return m["type"] == "result" }

func isResponse(id string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		r, _ := m["response"].(map[string]any)
		return m["type"] == "control_response" && r["request_id"] == id
	}
}

// end closes stdin and waits for the process to exit.
func (l *piped) end() (code int, stderr string) {
	l.t.Helper()
	l.in.Close()
	select {
	case <-l.done:
	case <-time.After(60 * time.Second):
		l.t.Fatal("cadre did not exit within 60s of its input's end")
	}
	for range l.lines {
	}
	return l.cmd.ProcessState.ExitCode(), l.errb.String()
}

func streamArgs(extra ...string) []string {
	return append([]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-5-5"}, extra...)
}

func TestStreamInputTurnsInOrder(t *testing.T) {
	srv := testkit.NewAnthropic(t, sdkScript)
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	// Without -p too: stream-json input is a headless run either way.
	l := e.startPiped(streamArgs()[1:]...)
	l.user("STREAM-ONE")
	l.user("STREAM-TWO") // sent while the first turn may still run: it waits its turn
	var got []string
	var sid any
	for range 2 {
		r := l.until("a result", isResult)
		got = append(got, fmt.Sprint(r["result"]))
		if sid != nil && r["session_id"] != sid {
			t.Errorf("second turn in session %v, want the first's %v", r["session_id"], sid)
		}
		sid = r["session_id"]
	}
	if strings.Join(got, ",") != "REPLY-ONE,REPLY-TWO" {
		t.Errorf("results %q, want REPLY-ONE then REPLY-TWO", got)
	}
	if code, stderr := l.end(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// The second turn saw the first: one session.
	reqs := srv.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "STREAM-ONE") || !strings.Contains(last, "REPLY-ONE") {
		t.Errorf("the second turn's request lacks the first exchange: %s", last)
	}
}

func TestStreamInputBadLine(t *testing.T) {
	srv := testkit.NewAnthropic(t, sdkScript)
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	l := e.startPiped(streamArgs()...)
	l.user("STREAM-ONE")
	l.send(`{"type":"user","message":`)
	if r := l.until("a result", isResult); r["result"] != "REPLY-ONE" {
		t.Errorf("result = %v: the turn given before the bad line must still run", r)
	}
	code, stderr := l.end()
	if code != 1 || !strings.Contains(stderr, "stream-json input line 2 is not JSON") {
		t.Errorf("exit %d, stderr %q: want 1 and an error naming line 2", code, stderr)
	}
}

func TestStreamInputFlagErrors(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "--input-format", "stream-json", "--output-format", "text"}, "needs --output-format stream-json"},
		{[]string{"-p", "--input-format", "stream-json", "--output-format", "stream-json", "hello"}, "takes no prompt argument"},
		{[]string{"-p", "--input-format", "xml", "hi"}, `invalid --input-format "xml"`},
		{[]string{"-p", "--permission-prompt-tool", "stdio", "hi"}, "--permission-prompt-tool needs --input-format stream-json"},
	} {
		p := e.run("", tc.args...)
		if p.code == 0 || !strings.Contains(p.stderr, tc.want) {
			t.Errorf("cadre %q: exit %d, stderr %q, want an error containing %q", tc.args, p.code, p.stderr, tc.want)
		}
	}
}

func TestStreamInputControlRequests(t *testing.T) {
	srv := testkit.NewAnthropic(t, sdkScript)
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	l := e.startPiped(streamArgs()...)
	l.send(`{"type":"control_request","request_id":"init-1","request":{"subtype":"initialize","systemPrompt":[""]}}`)
	init := l.until("the initialize response", isResponse("init-1"))
	body := init["response"].(map[string]any)["response"].(map[string]any)
	for _, k := range []string{"commands", "agents", "models", "output_style", "account"} {
		if _, ok := body[k]; !ok {
			t.Errorf("initialize response lacks %s: %v", k, body)
		}
	}
	l.send(`{"type":"control_request","request_id":"x-1","request":{"subtype":"get_settings"}}`)
	r := l.until("the get_settings response", isResponse("x-1"))["response"].(map[string]any)
	if r["subtype"] != "error" || r["error"] != "Unsupported control request subtype: get_settings" {
		t.Errorf("unknown request answered %v, want an error response", r)
	}
	l.user("STREAM-ONE")
	l.until("a result", isResult)
	if code, stderr := l.end(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// A subagent's call that would ask goes to the program as can_use_tool
// naming the subagent, and runs only after the program allows it.
func TestStreamInputSubagentAsksTheProgram(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		var body struct {
			Messages []struct {
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		_ = json.Unmarshal(req.Body, &body)
		first, last := string(body.Messages[0].Content), string(body.Messages[len(body.Messages)-1].Content)
		switch {
		case strings.Contains(first, "CHILD-WRITE") && !strings.Contains(last, "tool_result"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_child_bash", Name: "Bash", Input: map[string]any{"command": "touch child.txt && echo CHILD-RAN", "description": "Create child.txt"}}}}
		case strings.Contains(first, "CHILD-WRITE"):
			return testkit.Reply{Text: "child: " + map[bool]string{true: "ran", false: "refused"}[strings.Contains(last, "CHILD-RAN")]}
		case !strings.Contains(last, "tool_result"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_agent", Name: "Agent", Input: map[string]any{"description": "write", "prompt": "CHILD-WRITE", "subagent_type": "general-purpose"}}}}
		}
		return testkit.Reply{Text: "MAIN-DONE"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	l := e.startPiped(streamArgs("--permission-prompt-tool", "stdio", "--permission-mode", "default")...)
	l.user("go")
	req := l.until("a can_use_tool request", func(m map[string]any) bool { return m["type"] == "control_request" })
	inner := req["request"].(map[string]any)
	if inner["subtype"] != "can_use_tool" || inner["tool_name"] != "Bash" || inner["tool_use_id"] != "toolu_child_bash" {
		t.Fatalf("request = %v", inner)
	}
	if inner["parent_tool_use_id"] != "toolu_agent" || inner["agent_id"] == nil || inner["agent_id"] == "" || inner["agent_type"] != "general-purpose" {
		t.Errorf("the child's request must name it (agent_id, agent_type) and its Agent call (parent_tool_use_id): %v", inner)
	}
	l.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":"allow","updatedInput":%s}}}`,
		req["request_id"], mustJSON(inner["input"])))
	if r := l.until("a result", isResult); r["result"] != "MAIN-DONE" {
		t.Errorf("result = %v", r)
	}
	code, stderr := l.end()
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "permission-prompt-tool") {
		t.Errorf("--permission-prompt-tool stdio acts, yet stderr warns about it: %s", stderr)
	}
	if !strings.Contains(string(srv.Requests()[2].Body), "CHILD-RAN") {
		t.Errorf("the allowed command did not run")
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The program's PreToolUse hook (registered in initialize) is called with
// hook_callback, and its deny blocks the call: the command never runs and
// the model reads the reason.
func TestStreamInputHookCallbackBlocks(t *testing.T) {
	srv := testkit.NewAnthropic(t, sdkScript)
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	l := e.startPiped(streamArgs("--permission-mode", "bypassPermissions")...)
	l.send(`{"type":"control_request","request_id":"init-1","request":{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"]}]}}}`)
	if r := l.until("the initialize response", isResponse("init-1"))["response"].(map[string]any); r["subtype"] != "success" {
		t.Fatalf("initialize: %v", r)
	}
	l.user("RUN-BASH")
	req := l.until("a hook_callback request", func(m map[string]any) bool { return m["type"] == "control_request" })
	inner := req["request"].(map[string]any)
	input, _ := inner["input"].(map[string]any)
	if inner["subtype"] != "hook_callback" || inner["callback_id"] != "hook_0" || inner["tool_use_id"] != "toolu_bash" ||
		input["hook_event_name"] != "PreToolUse" || input["tool_name"] != "Bash" {
		t.Fatalf("request = %v", inner)
	}
	l.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"HOOK-SAYS-NO"}}}}`, req["request_id"]))
	if r := l.until("a result", isResult); r["result"] != "BASH-FAILED" {
		t.Errorf("result = %v, want the model to see the call refused", r["result"])
	}
	if code, stderr := l.end(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if last := string(srv.Requests()[1].Body); !strings.Contains(last, "HOOK-SAYS-NO") {
		t.Errorf("the model was not told the hook's reason: %s", last)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "ran.txt")); err == nil {
		t.Error("the blocked command ran")
	}
}

// interrupt stops the turn in progress and the session goes on; set_model
// changes the model of the next turn.
func TestStreamInputInterruptAndSetModel(t *testing.T) {
	hung := make(chan struct{}, 1)
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		if strings.Contains(body, "HANG-NOW") && !strings.Contains(body, "AFTER-INTERRUPT") {
			hung <- struct{}{}
			return testkit.Reply{Stall: testkit.StallNoResponse}
		}
		return testkit.Reply{Text: "ANSWERED"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	l := e.startPiped(streamArgs()...)
	l.user("HANG-NOW")
	// The request has reached the provider, which says nothing.
	select {
	case <-hung:
	case <-time.After(60 * time.Second):
		t.Fatal("the turn's request never reached the provider")
	}
	l.send(`{"type":"control_request","request_id":"int-1","request":{"subtype":"interrupt"}}`)
	// The answer comes once the turn was told to stop; the turn's result
	// may be written before it or after.
	var answer, result map[string]any
	for answer == nil || result == nil {
		m := l.until("the interrupt response and the interrupted turn's result", func(m map[string]any) bool {
			return isResponse("int-1")(m) || isResult(m)
		})
		if isResult(m) {
			result = m
		} else {
			answer = m
		}
	}
	if r := answer["response"].(map[string]any); r["subtype"] != "success" {
		t.Errorf("interrupt answered %v", r)
	}
	if result["is_error"] != true {
		t.Errorf("interrupted turn's result = %v, want an error result", result)
	}
	l.send(`{"type":"control_request","request_id":"model-1","request":{"subtype":"set_model","model":"claude-haiku-4-5"}}`)
	if r := l.until("the set_model response", isResponse("model-1"))["response"].(map[string]any); r["subtype"] != "success" {
		t.Errorf("set_model answered %v", r)
	}
	l.user("AFTER-INTERRUPT")
	if r := l.until("the next turn's result", isResult); r["result"] != "ANSWERED" {
		t.Errorf("next turn's result = %v", r)
	}
	if code, stderr := l.end(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := srv.Requests()
	if m := reqs[len(reqs)-1].JSON()["model"]; m != "claude-haiku-4-5" {
		t.Errorf("the turn after set_model used %v", m)
	}
}

// An Edit that asks reaches the program with the diff it would make, and
// its result carries structuredPatch as Claude Code's does.
func TestStreamInputEditAsksWithTheDiff(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		if !strings.Contains(string(req.Body), "tool_result") {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_edit", Name: "Edit", Input: map[string]any{"file_path": "notes.txt", "old_string": "PAPAYA", "new_string": "MANGO"}}}}
		}
		return testkit.Reply{Text: "EDITED"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	l := e.startPiped(streamArgs("--permission-prompt-tool", "stdio", "--permission-mode", "default")...)
	l.user("go")
	req := l.until("a can_use_tool request", func(m map[string]any) bool { return m["type"] == "control_request" })
	inner := req["request"].(map[string]any)
	path := filepath.Join(e.dir, "notes.txt")
	if real, err := filepath.EvalSymlinks(e.dir); err == nil {
		path = filepath.Join(real, "notes.txt")
	}
	want := "--- " + path + "\n+++ " + path + "\n@@ -1,2 +1,2 @@\n Meeting notes.\n-The secret word is PAPAYA.\n+The secret word is MANGO.\n"
	if inner["tool_name"] != "Edit" || inner["diff"] != want {
		t.Fatalf("can_use_tool = %v, want the Edit with diff %q", inner, want)
	}
	l.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":"allow"}}}`, req["request_id"]))
	res := l.until("the Edit's result", func(m map[string]any) bool { return m["type"] == "user" && m["tool_use_result"] != nil })
	patch, _ := json.Marshal(res["tool_use_result"].(map[string]any)["structuredPatch"])
	wantPatch := `[{"lines":[" Meeting notes.","-The secret word is PAPAYA.","+The secret word is MANGO."],"newLines":2,"newStart":1,"oldLines":2,"oldStart":1}]`
	if string(patch) != wantPatch {
		t.Errorf("structuredPatch = %s, want %s", patch, wantPatch)
	}
	if r := l.until("a result", isResult); r["result"] != "EDITED" {
		t.Errorf("result = %v", r)
	}
	if code, stderr := l.end(); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
