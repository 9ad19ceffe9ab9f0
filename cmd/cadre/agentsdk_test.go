package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/npm"
	"github.com/cadre-dev/cadre/llm"
)

// The Agent SDK end-to-end test: a program written against the real
// @anthropic-ai/claude-agent-sdk drives the cadre binary (as its
// pathToClaudeCodeExecutable) against the fake Anthropic server. The
// program is testdata/agentsdk/driver.mjs; each scenario prints what the
// program received.
//
// CADRE_SDK_EXECUTABLE=claude runs the same scenarios against Claude Code
// 2.1.330 from testdata/npm instead (offline, against the same fake
// server), to check that the test asserts what Claude Code does.
// CADRE_SDK_RECORD=DIR keeps each run's raw stdin and stdout there.

// sdkReport is what driver.mjs prints.
type sdkReport struct {
	Scenario string           `json:"scenario"`
	Messages []map[string]any `json:"messages"`
	Calls    []map[string]any `json:"calls"`
	Errors   []string         `json:"errors"`
}

// results returns the program's result messages, in order.
func (r sdkReport) results() []map[string]any {
	var out []map[string]any
	for _, m := range r.Messages {
		if m["type"] == "result" {
			out = append(out, m)
		}
	}
	return out
}

// resultTexts returns the result text of each result message, in order.
func (r sdkReport) resultTexts() []string {
	var out []string
	for _, m := range r.results() {
		out = append(out, resultText(m))
	}
	return out
}

// calls returns the callback records of one kind.
func (r sdkReport) callsOf(kind string) []map[string]any {
	var out []map[string]any
	for _, c := range r.Calls {
		if c["kind"] == kind {
			out = append(out, c)
		}
	}
	return out
}

// agentIDPattern finds the agent id in an Agent call's result, as both
// executables write it.
var agentIDPattern = regexp.MustCompile(`agentId: ([0-9A-Za-z-]+)`)

// sdkScript is the model behind every scenario. A conversation is known by
// its first user message (the prompt, for the main agent and for each
// subagent); its state by the last message.
func sdkScript(req testkit.Request) testkit.Reply {
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(req.Body, &body)
	// Claude Code 2.1.330 sends its environment as a message of role
	// "system" among the others for newer models; the conversation is
	// the user's and assistant's messages.
	var turns []string
	for _, m := range body.Messages {
		if m.Role != "system" {
			turns = append(turns, string(m.Content))
		}
	}
	if len(turns) == 0 {
		return testkit.Reply{Text: "OK"}
	}
	first, last := turns[0], turns[len(turns)-1]
	results := strings.Contains(last, "tool_result")
	agent := func(id, desc, prompt string, bg bool) testkit.ToolCall {
		in := map[string]any{"description": desc, "prompt": prompt, "subagent_type": "general-purpose"}
		if bg {
			in["run_in_background"] = true
		}
		return testkit.ToolCall{ID: id, Name: "Agent", Input: in}
	}
	switch {
	// Subagents, known by the prompts the main agent gave them.
	case strings.Contains(first, "CHILD-SYNC"):
		return testkit.Reply{Text: "RESULT-SYNC"}
	case strings.Contains(first, "CHILD-PAR-1"):
		return testkit.Reply{Text: "RESULT-PAR-1"}
	case strings.Contains(first, "CHILD-PAR-2"):
		return testkit.Reply{Text: "RESULT-PAR-2"}
	case strings.Contains(first, "CHILD-BG"):
		return testkit.Reply{Text: "RESULT-BG"}
	case strings.Contains(first, "CHILD-RESUME"):
		if strings.Contains(last, "FOLLOW-UP") {
			return testkit.Reply{Text: "RESULT-SECOND"}
		}
		return testkit.Reply{Text: "RESULT-FIRST"}

	case strings.Contains(first, "SAY-HELLO"):
		return testkit.Reply{Text: "HELLO-BACK"}

	case strings.Contains(first, "SPAWN-SYNC"):
		// The whole conversation says how far the work is: Claude Code
		// 2.1.330 runs every Agent call in the background and reports
		// results in notifications, cadre returns them as tool results.
		all := string(req.Body)
		switch {
		case strings.Contains(all, "RESULT-PAR-1") && strings.Contains(all, "RESULT-PAR-2"):
			return testkit.Reply{Text: "ALL-DONE"}
		case strings.Contains(all, "RESULT-SYNC") && !strings.Contains(all, "toolu_par1"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				agent("toolu_par1", "parallel child 1", "CHILD-PAR-1: answer in one line", false),
				agent("toolu_par2", "parallel child 2", "CHILD-PAR-2: answer in one line", false),
			}}
		case !strings.Contains(all, "toolu_sync"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{agent("toolu_sync", "sync child", "CHILD-SYNC: answer in one line", false)}}
		}
		return testkit.Reply{Text: "WAITING"}

	case strings.Contains(first, "SPAWN-RESUME"):
		// The child answers once, is sent a follow-up by its agentId
		// (read from the Agent call's result), and answers again.
		all := string(req.Body)
		id := agentIDPattern.FindStringSubmatch(all)
		switch {
		case strings.Contains(all, "RESULT-SECOND"):
			return testkit.Reply{Text: "RESUME-DONE"}
		case strings.Contains(all, "RESULT-FIRST") && id != nil && !strings.Contains(all, "toolu_send"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_send", Name: "SendMessage", Input: map[string]any{
				"to": id[1], "message": "FOLLOW-UP: answer again", "summary": "Ask the child again",
			}}}}
		case !strings.Contains(all, "toolu_first"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{agent("toolu_first", "resumed child", "CHILD-RESUME: answer in one line", false)}}
		}
		return testkit.Reply{Text: "WAITING"}

	case strings.Contains(first, "SPAWN-BG"):
		switch {
		case strings.Contains(last, "task-notification") && strings.Contains(last, "RESULT-BG"):
			return testkit.Reply{Text: "NOTIFIED-RESULT-BG"}
		case strings.Contains(last, "task-notification"):
			return testkit.Reply{Text: "NOTIFIED-WITHOUT-RESULT"}
		case !results:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{agent("toolu_bg", "background child", "CHILD-BG: answer in one line", true)}}
		}
		return testkit.Reply{Text: "LAUNCHED"}

	case strings.Contains(first, "RUN-BASH"):
		switch {
		case !results:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_bash", Name: "Bash", Input: map[string]any{
				"command": "touch ran.txt && echo BASH-RAN", "description": "Create ran.txt",
			}}}}
		// Claude Code's refusal quotes the command, BASH-RAN included.
		case strings.Contains(last, "BASH-RAN") && !strings.Contains(last, `"is_error":true`):
			return testkit.Reply{Text: "BASH-DONE"}
		}
		return testkit.Reply{Text: "BASH-FAILED"}

	case strings.Contains(first, "RUN-SLOW"):
		if !results {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_slow", Name: "Bash", Input: map[string]any{
				// Not a standalone sleep, which Claude Code 2.1.330 refuses.
				"command": "tail -f /dev/null", "description": "Wait",
			}}}}
		}
		return testkit.Reply{Text: "SLOW-DONE"}

	case strings.Contains(first, "RUN-COSTLY"):
		// One reply that costs more than the budget: the run stops before
		// the next call.
		if !results {
			return testkit.Reply{Usage: llm.Usage{InputTokens: 100_000, OutputTokens: 1_000}, ToolCalls: []testkit.ToolCall{{ID: "toolu_costly", Name: "Bash", Input: map[string]any{
				"command": "echo COSTLY", "description": "Echo",
			}}}}
		}
		return testkit.Reply{Text: "COSTLY-DONE"}

	case strings.Contains(first, "CHILD-WAIT"):
		if !results {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_childwait", Name: "Bash", Input: map[string]any{
				"command": "tail -f /dev/null", "description": "Wait",
			}}}}
		}
		return testkit.Reply{Text: "CHILD-WAITED"}
	case strings.Contains(first, "CONTROL-ONE"):
		switch {
		case strings.Contains(last, "task-notification"):
			return testkit.Reply{Text: "CONTROL-NOTIFIED"}
		case !results:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{agent("toolu_wait", "waiting child", "CHILD-WAIT: wait", true)}}
		}
		return testkit.Reply{Text: "CONTROL-LAUNCHED"}

	// Each streamed turn uses tokens of its own, so that a result's usage
	// shows whether it counts its own turn or all of them.
	case strings.Contains(last, "STREAM-TWO"):
		return testkit.Reply{Text: "REPLY-TWO", Usage: llm.Usage{InputTokens: 200, OutputTokens: 20}}
	case strings.Contains(last, "STREAM-ONE"):
		return testkit.Reply{Text: "REPLY-ONE", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}
	}
	return testkit.Reply{Text: "OK"}
}

// sdkExecutable is the binary the program drives: cadre, or Claude Code
// when CADRE_SDK_EXECUTABLE=claude.
func sdkExecutable(t *testing.T) (exe string, claude bool) {
	switch v := os.Getenv("CADRE_SDK_EXECUTABLE"); v {
	case "":
		return bin, false
	case "claude":
		return npm.Bin(t, "claude", "@anthropic-ai/claude-code"), true
	default:
		return v, false
	}
}

// runSDK runs one scenario of driver.mjs against the fake server.
func runSDK(t *testing.T, scenario string) (sdkReport, *testkit.AnthropicServer, *env) {
	t.Helper()
	modules := npm.Modules(t, "@anthropic-ai/claude-agent-sdk")
	exe, claude := sdkExecutable(t)
	srv := testkit.NewAnthropic(t, sdkScript)
	e := newEnv(t)
	// ES modules resolve packages from the script's folder upwards only.
	progDir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(progDir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "agentsdk", "driver.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	driver := filepath.Join(progDir, "driver.mjs")
	if err := os.WriteFile(driver, src, 0o644); err != nil {
		t.Fatal(err)
	}
	model := "claude-sonnet-5-5"
	// No --model: the program uses default options, so the model comes
	// from user settings (cadre) or the environment (Claude Code).
	if err := os.WriteFile(filepath.Join(e.home, "settings.json"), []byte(`{"model":"`+model+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if claude {
		e.set("ANTHROPIC_MODEL="+model, "ANTHROPIC_API_KEY=dummy",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1")
	} else {
		e.set("ANTHROPIC_API_KEY=dummy")
	}
	if dir := os.Getenv("CADRE_SDK_RECORD"); dir != "" {
		exe = recordingWrapper(t, exe, filepath.Join(dir, scenario))
		t.Cleanup(func() { recordRequests(t, srv, filepath.Join(dir, scenario, "requests.jsonl")) })
	}
	e.set("ANTHROPIC_BASE_URL="+srv.URL, "CADRE_SDK_EXECUTABLE="+exe)
	cmd := exec.Command("node", driver, scenario)
	cmd.Dir = e.dir
	cmd.Env = e.vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runWithin(t, cmd, &errb, 90*time.Second)
	var rep sdkReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("driver %s: output is not its report (%v)\nstdout:\n%s\nstderr:\n%s", scenario, err, out.String(), errb.String())
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("driver %s failed: %s\nstderr:\n%s", scenario, strings.Join(rep.Errors, "\n"), errb.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("driver %s stderr:\n%s", scenario, errb.String())
			for _, m := range rep.Messages {
				b, _ := json.Marshal(m)
				t.Logf("message: %s", b)
			}
		}
	})
	return rep, srv, e
}

// recordingWrapper is a shell script that runs exe with its stdin and stdout
// copied to dir, and its exit code, for reading what a peer really says.
func recordingWrapper(t *testing.T, exe, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w := filepath.Join(t.TempDir(), "wrapped")
	script := fmt.Sprintf("#!/bin/sh\necho \"$@\" > %[1]q/argv\n{ tee %[1]q/stdin.jsonl | %[2]q \"$@\"; echo $? > %[1]q/exit; } | tee %[1]q/stdout.jsonl\nexit $(cat %[1]q/exit)\n", dir, exe)
	if err := os.WriteFile(w, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

// recordRequests writes the bodies of the requests the fake server got, one
// a line.
func recordRequests(t *testing.T, srv *testkit.AnthropicServer, path string) {
	var b bytes.Buffer
	for _, r := range srv.Requests() {
		b.Write(bytes.TrimSpace(r.Body))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Error(err)
	}
}

// exactLocalSuggestion reports whether suggestions (the SDK's
// PermissionUpdate list) hold an addRules allow update for localSettings
// whose rules are Bash rules for parts of command as written, no prefix
// rule among them.
func exactLocalSuggestion(suggestions any, command string) bool {
	list, _ := suggestions.([]any)
	for _, s := range list {
		u, _ := s.(map[string]any)
		if u["type"] != "addRules" || u["behavior"] != "allow" || u["destination"] != "localSettings" {
			continue
		}
		rules, _ := u["rules"].([]any)
		var texts []string
		for _, r := range rules {
			rv, _ := r.(map[string]any)
			tool, _ := rv["toolName"].(string)
			content, _ := rv["ruleContent"].(string)
			texts = append(texts, tool+"("+content+")")
		}
		if len(texts) > 0 && allExactBash(texts, command) {
			return true
		}
	}
	return false
}

// allExactBash reports whether every rule is Bash(part) for a part of
// command as written, not a prefix rule.
func allExactBash(rules []string, command string) bool {
	for _, r := range rules {
		content, ok := strings.CutPrefix(r, "Bash(")
		content, ok2 := strings.CutSuffix(content, ")")
		if !ok || !ok2 || content == "" || strings.HasSuffix(content, "*") || !strings.Contains(command, content) {
			return false
		}
	}
	return true
}

func resultText(m map[string]any) string {
	s, _ := m["result"].(string)
	return s
}

func TestAgentSDK(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		rep, _, _ := runSDK(t, "default")
		rs := rep.results()
		if len(rs) != 1 || resultText(rs[0]) != "HELLO-BACK" || rs[0]["is_error"] != false {
			t.Fatalf("results = %v, want one success HELLO-BACK", rs)
		}
		// 10: the result says why the turn ended.
		if rs[0]["terminal_reason"] != "completed" {
			t.Errorf("terminal_reason = %v, want completed", rs[0]["terminal_reason"])
		}
		init := rep.Messages[0]
		if init["type"] != "system" || init["subtype"] != "init" {
			t.Fatalf("first message = %v, want system/init", init)
		}
		// 10: the init line names where the session started and the
		// program's additional directory.
		if init["original_cwd"] != init["cwd"] || init["cwd"] == "" {
			t.Errorf("init original_cwd = %v, cwd = %v: want the same folder", init["original_cwd"], init["cwd"])
		}
		extra := rep.callsOf("extraDir")
		if dirs, _ := init["additional_directories"].([]any); len(extra) != 1 || len(dirs) != 1 || dirs[0] != extra[0]["path"] {
			t.Errorf("init additional_directories = %v, want [%v]", init["additional_directories"], extra)
		}
	})
	t.Run("subagents", func(t *testing.T) {
		rep, _, _ := runSDK(t, "subagents")
		texts := rep.resultTexts()
		if !containsStr(texts, "ALL-DONE") {
			t.Fatalf("results %q, want ALL-DONE among them", texts)
		}
		// Each child's messages are tagged with its own Agent call's id.
		for id, want := range map[string]string{"toolu_sync": "RESULT-SYNC", "toolu_par1": "RESULT-PAR-1", "toolu_par2": "RESULT-PAR-2"} {
			if !taggedWith(rep, id, want) {
				t.Errorf("no message tagged parent_tool_use_id=%s carries %s", id, want)
			}
		}
		// 9: a completed child's notification summary is its report.
		for _, want := range []string{"RESULT-SYNC", "RESULT-PAR-1", "RESULT-PAR-2"} {
			if !notifiedWith(rep, want) {
				t.Errorf("no task_notification with summary %q and summary_is_report", want)
			}
		}
		// 4: one assistant message per content block, the parallel
		// Agent calls included.
		for _, m := range rep.Messages {
			if m["type"] != "assistant" || m["parent_tool_use_id"] != nil {
				continue
			}
			if blocks := m["message"].(map[string]any)["content"].([]any); len(blocks) != 1 {
				t.Errorf("assistant message with %d content blocks, want 1: %v", len(blocks), m["message"])
			}
		}
	})
	t.Run("background", func(t *testing.T) {
		rep, _, _ := runSDK(t, "background")
		texts := rep.resultTexts()
		if !containsStr(texts, "NOTIFIED-RESULT-BG") {
			t.Fatalf("results %q: the notification turn's result did not reach the program", texts)
		}
		// 5: the notification turn is marked as the runtime's, not the
		// user's: no plain user message carries it, and its result says
		// where it came from; every result has its index.
		for _, m := range rep.Messages {
			b, _ := json.Marshal(m["message"])
			if m["type"] == "user" && strings.Contains(string(b), "<task-notification>") && m["isSynthetic"] != true {
				t.Errorf("a plain user message carries the notification: %s", b)
			}
		}
		for i, r := range rep.results() {
			if r["result_index"] != float64(i) {
				t.Errorf("result %d has result_index %v", i, r["result_index"])
			}
			if resultText(r) == "NOTIFIED-RESULT-BG" {
				if o, _ := r["origin"].(map[string]any); o == nil || o["kind"] != "task-notification" {
					t.Errorf("the notification turn's result has origin %v, want kind task-notification", r["origin"])
				}
			}
		}
		// 9: the task's status change and the list of background tasks
		// are told as Claude Code tells them, each task line with a run_id.
		var updated bool
		for _, m := range rep.Messages {
			if m["subtype"] == "task_updated" {
				p, _ := m["patch"].(map[string]any)
				updated = updated || p["status"] == "completed"
			}
			if st, _ := m["subtype"].(string); strings.HasPrefix(st, "task_") && m["run_id"] == nil {
				t.Errorf("%s has no run_id", st)
			}
		}
		if !updated {
			t.Errorf("no task_updated with status completed")
		}
		if !notifiedWith(rep, "RESULT-BG") {
			t.Errorf("no task_notification with the agent's report RESULT-BG as its summary")
		}
		if n := countOf(rep, "system", "background_tasks_changed"); n < 2 {
			t.Errorf("%d background_tasks_changed messages, want one when the task starts and one when it ends", n)
		}
	})
	t.Run("permission", func(t *testing.T) {
		rep, _, e := runSDK(t, "permission")
		rs := rep.results()
		if len(rs) != 1 || resultText(rs[0]) != "BASH-DONE" {
			t.Fatalf("results = %v, want BASH-DONE", rs)
		}
		hooks, asks := rep.callsOf("PreToolUse"), rep.callsOf("canUseTool")
		if len(hooks) != 1 || hooks[0]["tool_name"] != "Bash" || hooks[0]["hook_event_name"] != "PreToolUse" || hooks[0]["toolUseID"] != "toolu_bash" {
			t.Errorf("PreToolUse hook calls = %v, want one for Bash toolu_bash", hooks)
		}
		if len(asks) != 1 || asks[0]["toolName"] != "Bash" || asks[0]["toolUseID"] != "toolu_bash" {
			t.Errorf("canUseTool calls = %v, want one for Bash toolu_bash", asks)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "ran.txt")); err != nil {
			t.Errorf("the allowed command did not run: %v", err)
		}
		// 3: a built-in tool's result is a plain string.
		if c := toolResult(rep, "toolu_bash"); c["content"] != "BASH-RAN" {
			t.Errorf("Bash's tool_result = %v, want content \"BASH-RAN\" as a string", c)
		}
		// 10: the suggestion is to save the exact command (not a prefix)
		// to the project's local settings, and the program's answer
		// with it saves it there.
		if len(asks) == 1 && !exactLocalSuggestion(asks[0]["suggestions"], "touch ran.txt && echo BASH-RAN") {
			t.Errorf("suggestions = %v, want an addRules allow update for localSettings with the exact command", asks[0]["suggestions"])
		}
		local := filepath.Join(e.dir, ".cadre", "settings.local.json")
		if _, claude := sdkExecutable(t); claude {
			local = filepath.Join(e.dir, ".claude", "settings.local.json")
		}
		var saved struct {
			Permissions struct{ Allow []string } `json:"permissions"`
		}
		if data, err := os.ReadFile(local); err != nil {
			t.Errorf("the approved suggestion was not saved: %v", err)
		} else if err := json.Unmarshal(data, &saved); err != nil || len(saved.Permissions.Allow) == 0 || !allExactBash(saved.Permissions.Allow, "touch ran.txt && echo BASH-RAN") {
			t.Errorf("%s = %s, want permissions.allow with the exact command's Bash rules", local, data)
		}
	})
	t.Run("denied", func(t *testing.T) {
		rep, _, e := runSDK(t, "denied")
		if texts := rep.resultTexts(); len(texts) != 1 || texts[0] != "BASH-FAILED" {
			t.Fatalf("results %q, want BASH-FAILED", texts)
		}
		if _, err := os.Stat(filepath.Join(e.dir, "ran.txt")); err == nil {
			t.Errorf("the denied command ran")
		}
		// 9: a call a rule refuses without asking is told in a
		// permission_denied line before its result.
		denied, result := -1, -1
		for i, m := range rep.Messages {
			if m["subtype"] == "permission_denied" && m["tool_name"] == "Bash" && m["tool_use_id"] == "toolu_bash" && m["message"] != "" && m["decision_reason_type"] != nil {
				denied = i
			}
			if m["type"] == "user" && toolResultIn(m, "toolu_bash") {
				result = i
			}
		}
		if denied < 0 || result < 0 || denied > result {
			t.Errorf("permission_denied at message %d, the tool result at %d: want a permission_denied line for toolu_bash before its result", denied, result)
		}
	})
	t.Run("resume", func(t *testing.T) {
		rep, _, _ := runSDK(t, "resume")
		if texts := rep.resultTexts(); !containsStr(texts, "RESUME-DONE") {
			t.Fatalf("results %q, want RESUME-DONE among them", texts)
		}
		// 8: after SendMessage the resumed child's lines are tagged with
		// the Agent call that launched it, not with the SendMessage call.
		if !taggedWith(rep, "toolu_first", "RESULT-SECOND") {
			t.Errorf("the resumed child's answer is not tagged parent_tool_use_id=toolu_first")
		}
		if taggedWith(rep, "toolu_send", "RESULT-SECOND") {
			t.Errorf("the resumed child's answer is tagged with the SendMessage call's id")
		}
		// 9: each run's notification summary is the agent's report.
		for _, want := range []string{"RESULT-FIRST", "RESULT-SECOND"} {
			if !notifiedWith(rep, want) {
				t.Errorf("no task_notification with summary %q and summary_is_report", want)
			}
		}
	})
	t.Run("stream", func(t *testing.T) {
		rep, _, _ := runSDK(t, "stream")
		texts := rep.resultTexts()
		if strings.Join(texts, ",") != "REPLY-ONE,REPLY-TWO" {
			t.Fatalf("results %q, want REPLY-ONE then REPLY-TWO", texts)
		}
		// 6: each result's usage is its own turn's.
		rs := rep.results()
		for i, want := range []float64{100, 200} {
			if u, _ := rs[i]["usage"].(map[string]any); u == nil || u["input_tokens"] != want {
				t.Errorf("result %d usage = %v, want input_tokens %v (that turn's)", i+1, rs[i]["usage"], want)
			}
		}
		// 10: modelUsage counts the whole session, and
		// model_usage_since_last_result each turn's share of it.
		for i, want := range []float64{100, 200} {
			byModel, _ := rs[i]["model_usage_since_last_result"].(map[string]any)
			m, _ := byModel["claude-sonnet-5-5"].(map[string]any)
			total, _ := rs[i]["modelUsage"].(map[string]any)["claude-sonnet-5-5"].(map[string]any)
			if m == nil || m["inputTokens"] != want || total == nil || total["inputTokens"] != []float64{100, 300}[i] {
				t.Errorf("result %d model_usage_since_last_result = %v, modelUsage = %v: want inputTokens %v of %v", i+1, byModel, rs[i]["modelUsage"], want, []float64{100, 300}[i])
			}
		}
		// 7: every turn starts with system/init.
		if n := countOf(rep, "system", "init"); n != 2 {
			t.Errorf("%d system/init messages, want one before each of the 2 turns", n)
		}
		if c := rep.callsOf("supportedCommands"); len(c) != 1 || c[0]["ok"] != true {
			t.Errorf("supportedCommands() = %v", c)
		}
		if c := rep.callsOf("setPermissionMode"); len(c) != 1 {
			t.Errorf("setPermissionMode() = %v", c)
		}
	})
	// 1: an error result ends the process with exit code 1, so the SDK's
	// loop throws after yielding it.
	for _, c := range []struct{ scenario, subtype, terminal string }{
		{"maxturns", "error_max_turns", "max_turns"},
		{"budget", "error_max_budget_usd", "budget_exhausted"},
		{"interrupt", "error_during_execution", ""},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			rep, _, _ := runSDK(t, c.scenario)
			rs := rep.results()
			if len(rs) == 0 || rs[len(rs)-1]["subtype"] != c.subtype {
				t.Fatalf("results = %v, want the last one %s", rs, c.subtype)
			}
			// 10: and why, where both executables can tell it.
			if c.terminal != "" && rs[len(rs)-1]["terminal_reason"] != c.terminal {
				t.Errorf("terminal_reason = %v, want %s", rs[len(rs)-1]["terminal_reason"], c.terminal)
			}
			if th := rep.callsOf("thrown"); len(th) != 1 || th[0]["thrown"] != true {
				t.Errorf("the SDK's loop did not throw after the error result: %v", th)
			}
		})
	}
	// 2: the control requests beyond initialize, interrupt and the mode
	// and model switches are answered, not refused.
	t.Run("control", func(t *testing.T) {
		rep, _, _ := runSDK(t, "control")
		call := func(kind string) map[string]any {
			c := rep.callsOf(kind)
			if len(c) != 1 {
				t.Fatalf("%s: %d calls recorded, want 1", kind, len(c))
			}
			if c[0]["ok"] != true {
				t.Errorf("%s() threw: %v", kind, c[0]["error"])
			}
			return c[0]
		}
		if v, ok := call("mcpServerStatus")["value"].([]any); !ok {
			t.Errorf("mcpServerStatus() = %v, want a list", v)
		}
		if v, _ := call("getContextUsage")["value"].(map[string]any); v == nil || v["maxTokens"].(float64) <= 0 || v["categories"].(float64) == 0 || v["model"] != "claude-sonnet-5-5" {
			t.Errorf("getContextUsage() = %v, want the window, categories and the model", v)
		}
		call("setMaxThinkingTokens")
		if v, _ := call("reloadSkills")["value"].(map[string]any); v["skills"] != true {
			t.Errorf("reloadSkills() = %v, want a skills list", v)
		}
		if v, _ := call("setMcpServers")["value"].(map[string]any); v == nil || v["added"] == nil || v["removed"] == nil {
			t.Errorf("setMcpServers({}) = %v, want added/removed/errors", v)
		}
		call("applyFlagSettings")
		if v, _ := call("rewindFiles")["value"].(map[string]any); v == nil || v["canRewind"] != false || v["error"] == "" {
			t.Errorf("rewindFiles() = %v, want canRewind false and why", v)
		}
		if v := call("backgroundTasks")["value"]; v != false {
			t.Errorf("backgroundTasks(unknown call) = %v, want false", v)
		}
		call("stopTask")
		var stopped bool
		for _, m := range rep.Messages {
			if m["subtype"] == "task_notification" && m["tool_use_id"] == "toolu_wait" {
				stopped = m["status"] == "stopped"
			}
		}
		if !stopped {
			t.Errorf("no task_notification with status stopped for the stopped task")
		}
	})
}

// toolResultIn reports whether message m carries the call's tool_result.
func toolResultIn(m map[string]any, id string) bool {
	msg, _ := m["message"].(map[string]any)
	blocks, _ := msg["content"].([]any)
	for _, b := range blocks {
		if b, _ := b.(map[string]any); b["type"] == "tool_result" && b["tool_use_id"] == id {
			return true
		}
	}
	return false
}

// toolResult returns the tool_result block for the call id.
func toolResult(rep sdkReport, id string) map[string]any {
	for _, m := range rep.Messages {
		msg, _ := m["message"].(map[string]any)
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			if b, _ := b.(map[string]any); b["type"] == "tool_result" && b["tool_use_id"] == id {
				return b
			}
		}
	}
	return nil
}

// notifiedWith reports whether a task_notification gives the agent's
// report as its summary.
func notifiedWith(rep sdkReport, report string) bool {
	for _, m := range rep.Messages {
		if m["subtype"] == "task_notification" && m["summary"] == report && m["summary_is_report"] == true {
			return true
		}
	}
	return false
}

// countOf counts the messages of a type and subtype.
func countOf(rep sdkReport, typ, subtype string) int {
	n := 0
	for _, m := range rep.Messages {
		if m["type"] == typ && (subtype == "" || m["subtype"] == subtype) {
			n++
		}
	}
	return n
}

// taggedWith reports whether a message tagged with the Agent call id
// carries want in its content.
func taggedWith(rep sdkReport, id, want string) bool {
	for _, m := range rep.Messages {
		if m["parent_tool_use_id"] != id {
			continue
		}
		b, _ := json.Marshal(m["message"])
		if strings.Contains(string(b), want) {
			return true
		}
	}
	return false
}

func containsStr(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
