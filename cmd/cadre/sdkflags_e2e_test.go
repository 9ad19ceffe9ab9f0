package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// These tests drive the flags the Claude Agent SDK passes to the
// executable it starts, in the --flag=value form its argv builder uses,
// and check each one's effect on what cadre does.

// answerOnly answers every request with one line.
func answerOnly(testkit.Request) testkit.Reply { return testkit.Reply{Text: "DONE"} }

// requestTools lists the tool names a recorded Anthropic request offered.
func requestTools(t *testing.T, r testkit.Request) []string {
	t.Helper()
	var body struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range body.Tools {
		names = append(names, tl.Name)
	}
	return names
}

func initLine(t *testing.T, out string) map[string]any {
	t.Helper()
	for _, l := range lines(t, out) {
		if l["type"] == "system" && l["subtype"] == "init" {
			return l
		}
	}
	t.Fatalf("no init line:\n%s", out)
	return nil
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

func TestSDKFlags(t *testing.T) {
	stream := []string{"-p", "hi", "--output-format=stream-json", "--verbose"}
	for _, tc := range []struct {
		name  string
		setup func(e *env) []string
		check func(t *testing.T, e *env, p proc, srv *testkit.AnthropicServer)
	}{
		{
			name:  "no model anywhere: the default, Sonnet",
			setup: func(*env) []string { return nil },
			check: func(t *testing.T, _ *env, p proc, srv *testkit.AnthropicServer) {
				if m := srv.Requests()[0].JSON()["model"]; m != "claude-sonnet-5-5" {
					t.Errorf("request model %v, want claude-sonnet-5-5", m)
				}
				if m := initLine(t, p.stdout)["model"]; m != "claude-sonnet-5-5" {
					t.Errorf("init model %v", m)
				}
			},
		},
		{
			name:  "--model=value form",
			setup: func(*env) []string { return []string{"--model=claude-haiku-4-5"} },
			check: func(t *testing.T, _ *env, _ proc, srv *testkit.AnthropicServer) {
				if m := srv.Requests()[0].JSON()["model"]; m != "claude-haiku-4-5" {
					t.Errorf("request model %v", m)
				}
			},
		},
		{
			name:  "--tools limits the pool",
			setup: func(*env) []string { return []string{"--tools=Read,Grep"} },
			check: func(t *testing.T, _ *env, p proc, srv *testkit.AnthropicServer) {
				if got := strs(initLine(t, p.stdout)["tools"]); !slices.Equal(got, []string{"Grep", "Read"}) && !slices.Equal(got, []string{"Read", "Grep"}) {
					t.Errorf("init tools %v", got)
				}
				if got := requestTools(t, srv.Requests()[0]); len(got) != 2 {
					t.Errorf("request tools %v", got)
				}
			},
		},
		{
			name:  "--tools= offers none",
			setup: func(*env) []string { return []string{"--tools="} },
			check: func(t *testing.T, _ *env, p proc, srv *testkit.AnthropicServer) {
				if got := strs(initLine(t, p.stdout)["tools"]); len(got) != 0 {
					t.Errorf("init tools %v", got)
				}
				if got := requestTools(t, srv.Requests()[0]); len(got) != 0 {
					t.Errorf("request tools %v", got)
				}
			},
		},
		{
			name:  "--tools=default offers all",
			setup: func(*env) []string { return []string{"--tools=default"} },
			check: func(t *testing.T, _ *env, p proc, _ *testkit.AnthropicServer) {
				if got := strs(initLine(t, p.stdout)["tools"]); !slices.Contains(got, "Bash") || !slices.Contains(got, "Agent") {
					t.Errorf("init tools %v", got)
				}
			},
		},
		{
			name: "--setting-sources= skips the project's settings",
			setup: func(e *env) []string {
				e.write(".cadre/settings.json", `{"model": "claude-opus-5-5"}`)
				return []string{"--setting-sources="}
			},
			check: func(t *testing.T, _ *env, _ proc, srv *testkit.AnthropicServer) {
				if m := srv.Requests()[0].JSON()["model"]; m != "claude-sonnet-5-5" {
					t.Errorf("request model %v: the project's settings were read", m)
				}
			},
		},
		{
			name: "--setting-sources=project reads them",
			setup: func(e *env) []string {
				e.write(".cadre/settings.json", `{"model": "claude-opus-5-5"}`)
				return []string{"--setting-sources=user,project"}
			},
			check: func(t *testing.T, _ *env, _ proc, srv *testkit.AnthropicServer) {
				if m := srv.Requests()[0].JSON()["model"]; m != "claude-opus-5-5" {
					t.Errorf("request model %v", m)
				}
			},
		},
		{
			name:  "--settings as JSON",
			setup: func(*env) []string { return []string{`--settings={"model": "claude-haiku-4-5"}`} },
			check: func(t *testing.T, _ *env, _ proc, srv *testkit.AnthropicServer) {
				if m := srv.Requests()[0].JSON()["model"]; m != "claude-haiku-4-5" {
					t.Errorf("request model %v", m)
				}
			},
		},
		{
			name: "--settings as a file, above the project's",
			setup: func(e *env) []string {
				e.write(".cadre/settings.json", `{"model": "claude-opus-5-5"}`)
				e.write("sdk-settings.json", `{"model": "claude-haiku-4-5"}`)
				return []string{"--settings", "sdk-settings.json"}
			},
			check: func(t *testing.T, _ *env, _ proc, srv *testkit.AnthropicServer) {
				if m := srv.Requests()[0].JSON()["model"]; m != "claude-haiku-4-5" {
					t.Errorf("request model %v", m)
				}
			},
		},
		{
			name: "--agents defines subagents",
			setup: func(*env) []string {
				return []string{`--agents={"checker": {"description": "Checks things", "prompt": "You check."}}`}
			},
			check: func(t *testing.T, _ *env, p proc, srv *testkit.AnthropicServer) {
				if got := strs(initLine(t, p.stdout)["agents"]); !slices.Contains(got, "checker") {
					t.Errorf("init agents %v", got)
				}
				if body := string(srv.Requests()[0].Body); !strings.Contains(body, "Checks things") {
					t.Errorf("the model was not told of the agent")
				}
			},
		},
		{
			// MCP itself is tested in mcp_e2e_test.go.
			name:  "--mcp-config is accepted",
			setup: func(*env) []string { return []string{`--mcp-config={"mcpServers": {}}`, "--strict-mcp-config"} },
			check: func(t *testing.T, _ *env, p proc, _ *testkit.AnthropicServer) {
				if strings.Contains(p.stderr, "MCP") {
					t.Errorf("stderr: %q", p.stderr)
				}
			},
		},
		{
			name:  "--debug-file gets the debug log",
			setup: func(e *env) []string { return []string{"--debug-file=" + filepath.Join(e.dir, "debug.log")} },
			check: func(t *testing.T, e *env, p proc, _ *testkit.AnthropicServer) {
				b, err := os.ReadFile(filepath.Join(e.dir, "debug.log"))
				if err != nil || !strings.Contains(string(b), "run started") {
					t.Errorf("debug file %q (%v)", b, err)
				}
				if strings.Contains(p.stderr, "run started") {
					t.Errorf("debug detail on stderr without --debug: %q", p.stderr)
				}
			},
		},
		{
			name: "flags with no effect warn once and go on",
			setup: func(*env) []string {
				return []string{"--betas=x", "--include-hook-events", "--session-mirror", "--plugin-dir=/x"}
			},
			check: func(t *testing.T, _ *env, p proc, _ *testkit.AnthropicServer) {
				for _, f := range []string{"--betas", "--include-hook-events", "--session-mirror", "--plugin-dir"} {
					if n := strings.Count(p.stderr, f+" has no effect"); n != 1 {
						t.Errorf("stderr warns about %s %d times: %q", f, n, p.stderr)
					}
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, srv := anthropicEnv(t, answerOnly)
			args := append(append([]string{}, stream...), tc.setup(e)...)
			p := ok(t, e.run("", args...))
			if res := finalResult(t, p.stdout); res["result"] != "DONE" {
				t.Errorf("result %v", res)
			}
			tc.check(t, e, p, srv)
		})
	}
}

// TestSDKFlagAddDir: --add-dir makes a directory outside the working one
// part of the workspace, so a Read there needs no approval.
func TestSDKFlagAddDir(t *testing.T) {
	extra := t.TempDir()
	if err := os.WriteFile(filepath.Join(extra, "far.txt"), []byte("FAR-AWAY\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := func(req testkit.Request) testkit.Reply {
		if !strings.Contains(string(req.Body), "tool_result") {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": filepath.Join(extra, "far.txt")}}}}
		}
		if strings.Contains(string(req.Body), "FAR-AWAY") {
			return testkit.Reply{Text: "READ IT"}
		}
		return testkit.Reply{Text: "DENIED"}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "DENIED"},
		{[]string{"--add-dir=" + extra}, "READ IT"},
	} {
		e, _ := anthropicEnv(t, script)
		p := ok(t, e.run("", append([]string{"-p", "read it", "--output-format=stream-json", "--verbose"}, tc.args...)...))
		if got := finalResult(t, p.stdout)["result"]; got != tc.want {
			t.Errorf("%v: result %v, want %s", tc.args, got, tc.want)
		}
	}
}

// TestStartFailureResultLine: a run that cannot start still tells a
// program why, as Claude Code does: one result line of subtype
// error_during_execution with errors[] and no result field, in
// stream-json and json; the one-line message on stderr; exit 1.
func TestStartFailureResultLine(t *testing.T) {
	const missing = "01a2009c-0000-7000-8000-000000000000"
	for _, tc := range []struct {
		name   string
		args   []string
		want   string
		wantID string
	}{
		{"unknown --resume id, stream-json", []string{"--output-format=stream-json", "--verbose", "--resume=" + missing}, "not found", missing},
		{"unknown --resume id, json", []string{"--output-format=json", "--resume", missing}, "not found", missing},
		{"bad --settings", []string{"--output-format=stream-json", "--verbose", `--settings={"model": 3}`}, "model", ""},
		{"missing --settings file", []string{"--output-format=json", "--settings=nope.json"}, "nope.json", ""},
		{"unknown --setting-sources", []string{"--output-format=json", "--setting-sources=user,team"}, `"team"`, ""},
		{"bad --agents", []string{"--output-format=stream-json", "--verbose", "--agents=[1]"}, "--agents", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, srv := anthropicEnv(t, answerOnly)
			p := e.run("", append([]string{"-p", "hi"}, tc.args...)...)
			failsWith(t, p, tc.want)
			ls := lines(t, p.stdout)
			if len(ls) != 1 {
				t.Fatalf("want one result line, got:\n%s", p.stdout)
			}
			res := ls[0]
			has(t, res, "type", "subtype", "is_error", "errors", "session_id", "uuid", "usage", "modelUsage", "permission_denials", "num_turns", "total_cost_usd")
			if res["type"] != "result" || res["subtype"] != "error_during_execution" || res["is_error"] != true {
				t.Errorf("result %v", res)
			}
			if _, ok := res["result"]; ok {
				t.Errorf("an error result has a result field: %v", res)
			}
			if errs := strs(res["errors"]); len(errs) != 1 || !strings.Contains(errs[0], tc.want) {
				t.Errorf("errors %v", errs)
			}
			if tc.wantID != "" && res["session_id"] != tc.wantID {
				t.Errorf("session_id %v, want %s", res["session_id"], tc.wantID)
			}
			if len(srv.Requests()) != 0 {
				t.Errorf("the model was called")
			}
		})
	}
}

// TestIncludePartialMessages: --include-partial-messages adds stream_event
// lines, Claude Code's SDKPartialAssistantMessage: the reply's streaming
// events in the Anthropic API's order, whose text deltas add up to the
// answer, before the complete assistant message.
func TestIncludePartialMessages(t *testing.T) {
	reply := func(req testkit.Request) testkit.Reply {
		if body := string(req.Body); !strings.Contains(body, "tool_result") && !strings.Contains(body, `"role":"tool"`) {
			return testkit.Reply{Text: "Let me look.", ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": "notes.txt"}}}, DeltaSize: 4}
		}
		return testkit.Reply{Text: "The secret word is PAPAYA.", DeltaSize: 4}
	}
	for _, provider := range []string{"anthropic", "openai"} {
		t.Run(provider, func(t *testing.T) {
			var e *env
			model := sonnet
			if provider == "anthropic" {
				e, _ = anthropicEnv(t, reply)
			} else {
				srv := testkit.NewOpenAI(t, reply)
				e = newEnv(t).set("OPENAI_BASE_URL=" + srv.URL)
				model = "openai:gpt-6-luna"
			}
			p := ok(t, e.run("", "-p", "what is the word?", "--model", model, "--output-format=stream-json", "--verbose", "--include-partial-messages"))
			var kinds, text []string
			var answerAt, lastStream int
			for i, l := range lines(t, p.stdout) {
				switch l["type"] {
				case "stream_event":
					has(t, l, "event", "session_id", "parent_tool_use_id", "uuid")
					ev := l["event"].(map[string]any)
					kinds = append(kinds, fmt.Sprint(ev["type"]))
					if d, ok := ev["delta"].(map[string]any); ok && d["type"] == "text_delta" {
						text = append(text, fmt.Sprint(d["text"]))
					}
					lastStream = i
				case "assistant":
					answerAt = i
				}
			}
			if got := strings.Join(text, ""); got != "Let me look.The secret word is PAPAYA." {
				t.Errorf("text deltas add up to %q", got)
			}
			if kinds[0] != "message_start" || kinds[len(kinds)-1] != "message_stop" || !slices.Contains(kinds, "content_block_start") ||
				!slices.Contains(kinds, "content_block_stop") || !slices.Contains(kinds, "message_delta") {
				t.Errorf("stream event kinds %v", kinds)
			}
			if n := strings.Count(strings.Join(kinds, ","), "message_start"); n != 2 {
				t.Errorf("%d messages started, want 2: %v", n, kinds)
			}
			if !slices.Contains(kinds, "content_block_delta") || lastStream > answerAt {
				t.Errorf("the last stream event (line %d) comes after the last assistant message (line %d)", lastStream, answerAt)
			}
		})
	}
	t.Run("off by default", func(t *testing.T) {
		e, _ := anthropicEnv(t, reply)
		p := ok(t, e.run("", "-p", "what is the word?", "--output-format=stream-json", "--verbose"))
		if strings.Contains(p.stdout, "stream_event") {
			t.Errorf("stream events without the flag")
		}
	})
}

// TestJSONSchemaStructuredOutput: --json-schema gives the main agent
// Claude Code's StructuredOutput tool with the schema as its input schema;
// the model's call ends the turn and the result carries the output in
// structured_output, its JSON text in result. A model that answers in text
// is told once to call the tool.
func TestJSONSchemaStructuredOutput(t *testing.T) {
	const schema = `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"]}`
	call := testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "StructuredOutput", Input: map[string]any{"answer": "42"}}}}
	for _, tc := range []struct {
		name     string
		script   testkit.Handler
		requests int
	}{
		{"called at once", func(testkit.Request) testkit.Reply { return call }, 1},
		{"reminded once", func(r testkit.Request) testkit.Reply {
			if strings.Contains(string(r.Body), "You MUST call the StructuredOutput tool") {
				return call
			}
			return testkit.Reply{Text: "The answer is 42."}
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, srv := anthropicEnv(t, tc.script)
			p := ok(t, e.run("", "-p", "what is the answer?", "--output-format=stream-json", "--verbose", "--json-schema="+schema))
			res := finalResult(t, p.stdout)
			if so, _ := json.Marshal(res["structured_output"]); string(so) != `{"answer":"42"}` || res["result"] != `{"answer":"42"}` || res["subtype"] != "success" {
				t.Errorf("result %v", res)
			}
			reqs := srv.Requests()
			if len(reqs) != tc.requests {
				t.Errorf("%d model requests, want %d", len(reqs), tc.requests)
			}
			var body struct {
				Tools []struct {
					Name        string          `json:"name"`
					InputSchema json.RawMessage `json:"input_schema"`
				} `json:"tools"`
			}
			json.Unmarshal(reqs[0].Body, &body)
			found := false
			for _, tl := range body.Tools {
				if tl.Name == "StructuredOutput" {
					found = true
					if !strings.Contains(string(tl.InputSchema), `"answer"`) {
						t.Errorf("StructuredOutput schema %s", tl.InputSchema)
					}
				}
			}
			if !found {
				t.Errorf("the model was not offered StructuredOutput")
			}
		})
	}
	t.Run("without the flag, no such tool and no structured_output", func(t *testing.T) {
		e, srv := anthropicEnv(t, answerOnly)
		p := ok(t, e.run("", "-p", "hi", "--output-format=stream-json", "--verbose"))
		if so, found := finalResult(t, p.stdout)["structured_output"]; found {
			t.Errorf("structured_output %v without --json-schema", so)
		}
		if body := string(srv.Requests()[0].Body); strings.Contains(body, `"name":"StructuredOutput"`) {
			t.Errorf("StructuredOutput offered without --json-schema")
		}
	})
	t.Run("a schema that is not an object's is a start failure", func(t *testing.T) {
		e, _ := anthropicEnv(t, answerOnly)
		failsWith(t, e.run("", "-p", "hi", "--output-format=json", `--json-schema={"type":"string"}`), "--json-schema", "object")
	})
}

// TestThinkingFlags: --max-thinking-tokens, --thinking and --effort turn
// on the main agent's extended thinking with the budget they name.
func TestThinkingFlags(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		budget any // nil: no thinking
	}{
		{nil, nil},
		{[]string{"--max-thinking-tokens=2048"}, 2048.0},
		{[]string{"--thinking=adaptive"}, 10000.0},
		{[]string{"--thinking=disabled", "--effort=high"}, nil},
		{[]string{"--effort=high"}, 31999.0},
		{[]string{"--effort=low"}, 4000.0},
	} {
		e, srv := anthropicEnv(t, answerOnly)
		ok(t, e.run("", append([]string{"-p", "hi", "--output-format=stream-json", "--verbose"}, tc.args...)...))
		th, _ := srv.Requests()[0].JSON()["thinking"].(map[string]any)
		var got any
		if th != nil {
			got = th["budget_tokens"]
		}
		if got != tc.budget {
			t.Errorf("%v: thinking budget %v, want %v", tc.args, got, tc.budget)
		}
	}
	e, _ := anthropicEnv(t, answerOnly)
	failsWith(t, e.run("", "-p", "hi", "--effort=extreme"), "--effort")
}

// TestForegroundSubagentTaskLines: a foreground subagent run is announced
// with task_started (is_backgrounded false) and ends with a
// task_notification, as Claude Code announces every run, both before the
// Agent call's result; quiet output shows them too.
func TestForegroundSubagentTaskLines(t *testing.T) {
	script := func(r testkit.Request) testkit.Reply {
		body := string(r.Body)
		switch {
		case strings.Contains(body, "CHILD-TASK") && !strings.Contains(body, "SPAWN-IT"):
			return testkit.Reply{Text: "child done"}
		case !strings.Contains(body, "tool_result"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_fg", Name: "Agent", Input: map[string]any{
				"description": "sub job", "prompt": "CHILD-TASK: do it", "subagent_type": "general-purpose"}}}}
		}
		return testkit.Reply{Text: "DONE"}
	}
	for _, verbose := range []bool{true, false} {
		e, _ := anthropicEnv(t, script)
		args := []string{"-p", "SPAWN-IT now", "--output-format=stream-json"}
		if verbose {
			args = append(args, "--verbose")
		}
		p := ok(t, e.run("", args...))
		var order []string
		for _, l := range lines(t, p.stdout) {
			switch {
			case l["subtype"] == "task_started":
				has(t, l, "task_id", "tool_use_id", "description", "subagent_type", "is_backgrounded", "prompt", "uuid", "session_id")
				if l["is_backgrounded"] != false || l["tool_use_id"] != "toolu_fg" || l["description"] != "sub job" {
					t.Errorf("task_started %v", l)
				}
				order = append(order, "started")
			case l["subtype"] == "task_notification":
				has(t, l, "task_id", "tool_use_id", "status", "summary", "output_file", "usage", "uuid", "session_id")
				if l["status"] != "completed" || l["tool_use_id"] != "toolu_fg" {
					t.Errorf("task_notification %v", l)
				}
				order = append(order, "notification")
			case l["type"] == "user" && l["parent_tool_use_id"] == nil && strings.Contains(fmt.Sprint(l["message"]), "child done"):
				order = append(order, "result")
			}
		}
		if got := strings.Join(order, ","); got != "started,notification,result" {
			t.Errorf("verbose=%v: order %s", verbose, got)
		}
	}
}

// TestPermissionModesDontAskAndAuto: the Agent SDK's dontAsk and auto
// modes are accepted; dontAsk denies an edit default would ask about,
// auto lets it run (acceptEdits that never asks); both deny a command.
func TestPermissionModesDontAskAndAuto(t *testing.T) {
	script := func(r testkit.Request) testkit.Reply {
		if !strings.Contains(string(r.Body), "tool_result") {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				{Name: "Write", Input: map[string]any{"file_path": "out.txt", "content": "x"}},
				{Name: "Bash", Input: map[string]any{"command": "echo hi"}},
			}}
		}
		return testkit.Reply{Text: "DONE"}
	}
	for _, tc := range []struct {
		mode      string
		wantWrite bool
	}{{"dontAsk", false}, {"auto", true}} {
		e, _ := anthropicEnv(t, script)
		p := ok(t, e.run("", "-p", "go", "--output-format=stream-json", "--verbose", "--permission-mode="+tc.mode))
		if m := initLine(t, p.stdout)["permissionMode"]; m != tc.mode {
			t.Errorf("init permissionMode %v, want %s", m, tc.mode)
		}
		_, err := os.Stat(filepath.Join(e.dir, "out.txt"))
		if (err == nil) != tc.wantWrite {
			t.Errorf("%s: the Write ran: %v, want %v", tc.mode, err == nil, tc.wantWrite)
		}
		denied := 0
		for _, r := range toolResults(t, p.stdout) {
			if r["is_error"] == true && strings.Contains(fmt.Sprint(r["content"]), tc.mode) {
				denied++
			}
		}
		if want := map[bool]int{true: 1, false: 2}[tc.wantWrite]; denied != want {
			t.Errorf("%s: %d calls denied naming the mode, want %d:\n%s", tc.mode, denied, want, p.stdout)
		}
	}
}

// TestSessionFlags: --session-id names the new session, --fork-session
// continues a resumed one in a new session that starts from a copy, and
// --no-session-persistence leaves no session behind.
func TestSessionFlags(t *testing.T) {
	const id = "01a2009c-0000-7000-8000-00000000abcd"
	const forked = "01a2009c-0000-7000-8000-00000000f0f0"
	e, srv := anthropicEnv(t, answerOnly)
	p := ok(t, e.run("", "-p", "remember PAPAYA", "--output-format=stream-json", "--verbose", "--session-id="+id))
	if sid := finalResult(t, p.stdout)["session_id"]; sid != id {
		t.Fatalf("session_id %v, want %s", sid, id)
	}
	p = ok(t, e.run("", "-p", "what was it?", "--output-format=stream-json", "--verbose", "--resume="+id, "--fork-session", "--session-id="+forked))
	if sid := finalResult(t, p.stdout)["session_id"]; sid != forked {
		t.Errorf("forked session_id %v, want %s", sid, forked)
	}
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, "remember PAPAYA") {
		t.Errorf("the fork did not start from the resumed history")
	}
	before := len(listSessions(t, e))
	p = ok(t, e.run("", "-p", "hi", "--output-format=stream-json", "--verbose", "--no-session-persistence"))
	if after := len(listSessions(t, e)); after != before {
		t.Errorf("--no-session-persistence: %d sessions, was %d", after, before)
	}
	if strings.Contains(p.stderr, "not supported") {
		t.Errorf("stderr %q", p.stderr)
	}
}
