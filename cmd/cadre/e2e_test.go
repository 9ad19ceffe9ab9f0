package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// These tests build the real cadre binary once and drive it as a user
// would, against fake provider servers that speak the real wire protocols.

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cadre-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "cadre")
	// The sandbox launcher is installed beside cadre, as a release ships
	// them; TestSandboxLauncherFallback runs cadre without it.
	build := exec.Command("go", "build", "-o", dir+string(filepath.Separator), ".", "../cadre-sandbox")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build cadre:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if err := pg.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

type proc struct {
	stdout, stderr string
	code           int
}

// env is a clean environment: no provider keys or URLs leak in from the
// machine, and state goes to a temp CADRE_HOME.
type env struct {
	t    *testing.T
	bin  string // the cadre binary run; "" for the one TestMain built
	home string // CADRE_HOME
	dir  string // the project (cwd)
	vars []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, home: t.TempDir(), dir: t.TempDir()}
	e.vars = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CADRE_HOME=" + e.home}
	e.write("notes.txt", "Meeting notes.\nThe secret word is PAPAYA.\n")
	return e
}

func (e *env) set(kv ...string) *env { e.vars = append(e.vars, kv...); return e }

func (e *env) write(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) run(stdin string, args ...string) proc {
	e.t.Helper()
	exe := bin
	if e.bin != "" {
		exe = e.bin
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = e.dir
	cmd.Env = e.vars
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runWithin(e.t, cmd, &errb, 60*time.Second)
	return proc{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
}

// runWithin runs cmd to its end, killing it and failing the test with its
// standard error (errb) if it takes longer than limit: a hung process must
// fail the test, not the whole test binary's timeout.
func runWithin(t *testing.T, cmd *exec.Cmd, errb *bytes.Buffer, limit time.Duration) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not finish in %v; stderr:\n%s", strings.Join(cmd.Args, " "), limit, errb.String())
	}
}

// lines parses stream-json output, failing on any line that is not JSON.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var ls []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stream-json line does not parse: %v\n%s", err, l)
		}
		ls = append(ls, m)
	}
	return ls
}

func has(t *testing.T, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("%v line lacks %q: %v", m["type"], k, m)
		}
	}
}

// readThenAnswer is the two-turn script: Read notes.txt, then quote what the
// tool result said (taken from the request, so the answer proves the loop
// really carried the file's content back to the model).
func readThenAnswer(req testkit.Request) testkit.Reply {
	body := string(req.Body)
	if !strings.Contains(body, "tool_result") && !strings.Contains(body, `"role":"tool"`) {
		return testkit.Reply{Text: "Let me read it.", ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": "notes.txt"}}}}
	}
	if strings.Contains(body, "PAPAYA") {
		return testkit.Reply{Text: "The notes say: The secret word is PAPAYA."}
	}
	return testkit.Reply{Text: "I could not see the file."}
}

func checkToolLoop(t *testing.T, p proc) {
	t.Helper()
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", p.code, p.stderr, p.stdout)
	}
	ls := lines(t, p.stdout)
	// The first reply has two content blocks (text, then the call): two
	// assistant lines, as Claude Code writes one per block.
	if len(ls) != 6 {
		t.Fatalf("want init, assistant, assistant, user, assistant, result; got %d lines:\n%s", len(ls), p.stdout)
	}
	want := []string{"system", "assistant", "assistant", "user", "assistant", "result"}
	sid := ls[0]["session_id"]
	for i, l := range ls {
		if l["type"] != want[i] {
			t.Errorf("line %d type %v, want %s", i, l["type"], want[i])
		}
		has(t, l, "session_id", "uuid")
		if l["session_id"] != sid {
			t.Errorf("line %d session_id %v, want %v", i, l["session_id"], sid)
		}
	}
	has(t, ls[0], "subtype", "cwd", "tools", "model", "permissionMode")
	for _, i := range []int{1, 2, 3, 4} {
		has(t, ls[i], "message", "parent_tool_use_id")
		if ls[i]["parent_tool_use_id"] != nil {
			t.Errorf("line %d parent_tool_use_id = %v, want null", i, ls[i]["parent_tool_use_id"])
		}
	}
	for _, i := range []int{1, 2, 4} {
		msg := ls[i]["message"].(map[string]any)
		has(t, msg, "id", "role", "model", "content", "usage", "stop_reason")
	}
	if a, b := ls[1]["message"].(map[string]any), ls[2]["message"].(map[string]any); a["id"] != b["id"] || a["stop_reason"] != nil || b["stop_reason"] != "tool_use" {
		t.Errorf("the first reply's lines: id %v/%v, stop_reason %v/%v; want one id, null then tool_use", a["id"], b["id"], a["stop_reason"], b["stop_reason"])
	}
	if !strings.Contains(fmt.Sprint(ls[3]["message"]), "PAPAYA") {
		t.Errorf("tool result does not hold the file: %v", ls[3]["message"])
	}
	res := ls[5]
	has(t, res, "subtype", "is_error", "result", "num_turns", "duration_ms", "duration_api_ms", "total_cost_usd", "usage")
	if res["subtype"] != "success" || res["is_error"] != false || res["num_turns"] != 2.0 {
		t.Errorf("result = %v", res)
	}
	if !strings.Contains(res["result"].(string), "PAPAYA") {
		t.Errorf("answer does not quote the file: %v", res["result"])
	}
}

func TestAnthropicToolLoop(t *testing.T) {
	srv := testkit.NewAnthropic(t, readThenAnswer)
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	p := e.run("", "-p", "What is the secret word in notes.txt?", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-5-5")
	checkToolLoop(t, p)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	body := reqs[0].JSON()
	if body["model"] != "claude-sonnet-5-5" || body["stream"] != true {
		t.Errorf("request model/stream: %v %v", body["model"], body["stream"])
	}
}

func TestOpenAIToolLoop(t *testing.T) {
	srv := testkit.NewOpenAI(t, readThenAnswer)
	e := newEnv(t).set("OPENAI_BASE_URL=" + srv.URL)
	p := e.run("", "-p", "What is the secret word in notes.txt?", "--output-format", "stream-json", "--verbose", "--model", "openai:gpt-6-luna")
	checkToolLoop(t, p)
	if body := srv.Requests()[0].JSON(); body["model"] != "gpt-6-luna" {
		t.Errorf("request model %v", body["model"])
	}
}

func toolResults(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rs []map[string]any
	for _, l := range lines(t, out) {
		if l["type"] != "user" {
			continue
		}
		for _, c := range l["message"].(map[string]any)["content"].([]any) {
			rs = append(rs, c.(map[string]any))
		}
	}
	return rs
}

func TestDeniedToolIsAnErrorResultAndTheRunSucceeds(t *testing.T) {
	callBash := func(req testkit.Request) testkit.Reply {
		if !strings.Contains(string(req.Body), "tool_result") {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "echo hi"}}}}
		}
		return testkit.Reply{Text: "Bash was denied."}
	}
	for _, tc := range []struct {
		name     string
		args     []string
		settings string
		rule     string
		inPool   bool
	}{
		{name: "flag", args: []string{"--disallowed-tools", "Bash"}, rule: `"Bash"`},
		{name: "settings", settings: `{"permissions": {"deny": ["Bash"]}}`, rule: `"Bash"`},
		{name: "specifier", settings: `{"permissions": {"deny": ["Bash(echo:*)"]}}`, rule: `Bash(echo:*)`, inPool: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, callBash)
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
			if tc.settings != "" {
				e.write(".cadre/settings.json", tc.settings)
			}
			args := append([]string{"-p", "run echo", "--output-format", "stream-json", "--model", "claude-sonnet-5-5"}, tc.args...)
			p := e.run("", args...)
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			rs := toolResults(t, p.stdout)
			if len(rs) != 1 || rs[0]["is_error"] != true || !strings.Contains(fmt.Sprint(rs[0]["content"]), tc.rule) {
				t.Fatalf("tool result = %v, want an is_error result naming %s", rs, tc.rule)
			}
			ls := lines(t, p.stdout)
			if res := ls[len(ls)-1]; res["subtype"] != "success" {
				t.Errorf("result %v", res)
			}
			tools := fmt.Sprint(ls[0]["tools"])
			if strings.Contains(tools, "Bash") != tc.inPool {
				t.Errorf("init tools %s: Bash in pool = %v, want %v", tools, !tc.inPool, tc.inPool)
			}
			var sent []string
			for _, tl := range srv.Requests()[0].JSON()["tools"].([]any) {
				sent = append(sent, tl.(map[string]any)["name"].(string))
			}
			if strings.Contains(strings.Join(sent, ","), "Bash") != tc.inPool {
				t.Errorf("model was offered %v", sent)
			}
		})
	}
}

func TestBadInputGivesAClearError(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		vars     []string
		settings string
		want     []string
	}{
		{name: "unknown provider", args: []string{"--model", "acme:x1"}, want: []string{`unknown provider "acme"`}},
		{name: "missing key", args: []string{"--model", "claude-sonnet-5-5"}, want: []string{"ANTHROPIC_API_KEY"}},
		{name: "missing openai key", args: []string{"--model", "gpt-6-sol"}, want: []string{"OPENAI_API_KEY"}},
		{name: "malformed settings", settings: `{"model": "claude-sonnet-5-5",}`, want: []string{"settings.json"}},
		{name: "bad value", settings: `{"maxTurns": "ten"}`, want: []string{"settings.json", "maxTurns"}},
		{name: "bad mode", args: []string{"--permission-mode", "yolo"}, want: []string{"yolo"}},
		{name: "bad format", args: []string{"--output-format", "xml"}, want: []string{"xml"}},
		{name: "bad resume id", args: []string{"--model", "script:x.yaml", "--resume", "../etc"}, want: []string{"invalid session id"}},
		{name: "no model", want: []string{"model"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t).set(tc.vars...)
			if tc.settings != "" {
				e.write(".cadre/settings.json", tc.settings)
			}
			e.write("x.yaml", "agents:\n  main:\n    - text: hi\n")
			p := e.run("", append([]string{"-p", "hello"}, tc.args...)...)
			if p.code == 0 {
				t.Fatalf("exit 0, want failure; stdout %s", p.stdout)
			}
			msg := strings.TrimSpace(p.stderr)
			if strings.Count(msg, "\n") > 0 || !strings.HasPrefix(msg, "cadre: ") {
				t.Errorf("want one line starting 'cadre: ', got %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q does not mention %q", msg, w)
				}
			}
		})
	}
}

func TestSchemaViolationIsReportedToTheModel(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		if !strings.Contains(string(req.Body), "tool_result") {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": "notes.txt", "offset": "ten"}}}}
		}
		return testkit.Reply{Text: "fixed"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	p := e.run("", "-p", "read", "--output-format", "stream-json", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	rs := toolResults(t, p.stdout)
	if len(rs) != 1 || rs[0]["is_error"] != true || !strings.Contains(fmt.Sprint(rs[0]["content"]), "InputValidationError") {
		t.Fatalf("tool result %v", rs)
	}
}

func TestProviderFaultsAreRetried(t *testing.T) {
	fast := map[string]string{"retry-after-ms": "5"}
	for _, tc := range []struct {
		name    string
		replies []testkit.Reply
		openai  bool
	}{
		{name: "500 then 200", replies: []testkit.Reply{{Status: 500, Header: fast}, {Text: "recovered"}}},
		{name: "429 then 200", replies: []testkit.Reply{{Status: 429, Header: fast}, {Text: "recovered"}}},
		{name: "529 overloaded then 200", replies: []testkit.Reply{{Status: 529, Header: fast}, {Text: "recovered"}}},
		{name: "cut stream then 200", replies: []testkit.Reply{{Text: "a long answer that gets cut", CutAfter: 4, Header: fast}, {Text: "recovered"}}},
		{name: "openai 500 then 200", openai: true, replies: []testkit.Reply{{Status: 500, Header: fast}, {Text: "recovered"}}},
		{name: "openai cut stream then 200", openai: true, replies: []testkit.Reply{{Text: "a long answer that gets cut", CutAfter: 3, Header: fast}, {Text: "recovered"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			model := "claude-sonnet-5-5"
			if tc.openai {
				srv := testkit.NewOpenAI(t, testkit.Queue(tc.replies...))
				e.set("OPENAI_BASE_URL=" + srv.URL)
				model = "openai:gpt-6-sol"
			} else {
				srv := testkit.NewAnthropic(t, testkit.Queue(tc.replies...))
				e.set("ANTHROPIC_BASE_URL=" + srv.URL)
			}
			p := e.run("", "-p", "hi", "--model", model)
			if p.code != 0 || strings.TrimSpace(p.stdout) != "recovered" {
				t.Fatalf("exit %d, stdout %q, stderr %q", p.code, p.stdout, p.stderr)
			}
		})
	}
}

func TestPersistentFaultEndsWithAClearError(t *testing.T) {
	fast := map[string]string{"retry-after-ms": "1"}
	var replies []testkit.Reply
	for range 10 {
		replies = append(replies, testkit.Reply{Text: "cut again and again", CutAfter: 3, Header: fast})
	}
	srv := testkit.NewAnthropic(t, testkit.Queue(replies...))
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	p := e.run("", "-p", "hi", "--model", "claude-sonnet-5-5", "--output-format", "stream-json")
	if p.code == 0 {
		t.Fatal("exit 0")
	}
	ls := lines(t, p.stdout)
	res := ls[len(ls)-1]
	if res["type"] != "result" || res["subtype"] != "error_during_execution" || res["is_error"] != true {
		t.Errorf("result %v", res)
	}
	if !strings.Contains(p.stderr, "stream") || strings.Count(strings.TrimSpace(p.stderr), "\n") != 0 {
		t.Errorf("stderr %q", p.stderr)
	}
}
