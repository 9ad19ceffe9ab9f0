package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/mcp/mcptest"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/npm"
)

// The MCP client end to end: real servers (the npm reference server
// server-everything, and cadre's own Go test server) started by the real
// binary from .mcp.json and agent files, against the fake provider.

var (
	mcpHelperOnce sync.Once
	mcpHelperPath string
	mcpHelperErr  error
)

// mcpHelper builds internal/mcp/testdata/server once: a Go MCP server
// with echo, whose -exit-on-call N makes it crash on its Nth call.
func mcpHelper(t *testing.T) string {
	t.Helper()
	mcpHelperOnce.Do(func() {
		mcpHelperPath = filepath.Join(filepath.Dir(bin), "mcp-test-server")
		out, err := exec.Command("go", "build", "-o", mcpHelperPath, "../../internal/mcp/testdata/server").CombinedOutput()
		if err != nil {
			mcpHelperErr = fmt.Errorf("build the MCP test server: %v\n%s", err, out)
		}
	})
	if mcpHelperErr != nil {
		t.Fatal(mcpHelperErr)
	}
	return mcpHelperPath
}

// mcpServer is a .mcp.json entry that records its pid in pidFile, then
// runs command args.
func mcpServer(pidFile, command string, args ...string) string {
	quoted := []string{`"echo $$ > \"$0\"; exec \"$@\""`, fmt.Sprintf("%q", pidFile), fmt.Sprintf("%q", command)}
	for _, a := range args {
		quoted = append(quoted, fmt.Sprintf("%q", a))
	}
	return fmt.Sprintf(`{"command": "sh", "args": ["-c", %s]}`, strings.Join(quoted, ", "))
}

// approve makes the user's local settings approve the project's servers.
func (e *env) approve(extra string) {
	e.write(".cadre/settings.local.json", `{"enableAllProjectMcpServers": true`+extra+`}`)
}

// toolResultTexts are the stream's tool results, each "is_error content".
func toolResultTexts(t *testing.T, out string) []string {
	var texts []string
	for _, r := range toolResults(t, out) {
		if r["type"] == "tool_result" {
			texts = append(texts, fmt.Sprint(r["is_error"] == true)+" "+fmt.Sprint(r["content"]))
		}
	}
	return texts
}

// offered lists a request's tools; none is an empty list.
func offered(req testkit.Request) []string {
	if req.JSON()["tools"] == nil {
		return nil
	}
	return toolNames(req)
}

func TestMCPEchoFromProjectFile(t *testing.T) {
	everything := npm.Bin(t, "mcp-server-everything", "@modelcontextprotocol/server-everything")
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		if !strings.Contains(body, "tool_result") {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "mcp__everything__echo", Input: map[string]any{"message": "hello from cadre"}}}}
		}
		return testkit.Reply{Text: "done"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	pid := filepath.Join(e.dir, ".server.pid") // in the workspace: a project server runs sandboxed
	e.write(".mcp.json", `{"mcpServers": {"everything": `+mcpServer(pid, everything)+`}}`)
	e.approve("")
	p := e.run("", "--trust-workspace", "-p", "echo something", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-5-5", "--allowedTools", "mcp__everything")
	if p.code != 0 {
		t.Fatalf("exit %d: %s\n%s", p.code, p.stderr, p.stdout)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if !slices.Contains(toolNames(reqs[0]), "mcp__everything__echo") {
		t.Errorf("first request's tools %v lack mcp__everything__echo", toolNames(reqs[0]))
	}
	if !strings.Contains(string(reqs[1].Body), "Echo: hello from cadre") {
		t.Errorf("the model's next request does not carry the echo: %s", reqs[1].Body)
	}
	init := lines(t, p.stdout)[0]
	if got := fmt.Sprint(init["mcp_servers"]); got != "[map[name:everything status:connected]]" {
		t.Errorf("init mcp_servers %s", got)
	}
	mcptest.Reaped(t, pid)
}

// childAgent is a Claude Code agent file whose pool is one MCP tool.
const echoAgent = `---
name: echoer
description: Echoes through MCP.
tools: mcp__everything__echo
---
ECHOER-PROMPT: call the echo tool.
`

func TestMCPToolInSubagentAndDenialHoldsInChildren(t *testing.T) {
	everything := npm.Bin(t, "mcp-server-everything", "@modelcontextprotocol/server-everything")
	for _, tc := range []struct {
		name   string
		deny   bool
		result string
	}{
		{name: "allowed", result: "false [map[text:Echo: from the child type:text]]"},
		{name: "denied", deny: true, result: "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
				body := string(req.Body)
				switch {
				case strings.Contains(body, "ECHOER-PROMPT") && !strings.Contains(body, "tool_result"):
					return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "mcp__everything__echo", Input: map[string]any{"message": "from the child"}}}}
				case strings.Contains(body, "ECHOER-PROMPT"):
					return testkit.Reply{Text: "child done"}
				case !strings.Contains(body, "tool_result"):
					return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{"description": "echo", "prompt": "echo it", "subagent_type": "echoer"}}}}
				}
				return testkit.Reply{Text: "main done"}
			})
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
			e.write(".mcp.json", `{"mcpServers": {"everything": {"command": "`+everything+`"}}}`)
			e.write(".claude/agents/echoer.md", echoAgent)
			if tc.deny {
				e.write(".cadre/settings.json", `{"permissions": {"deny": ["mcp__everything__echo"]}}`)
			}
			e.approve("")
			p := e.run("", "--trust-workspace", "-p", "delegate", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-5-5", "--allowedTools", "mcp__everything")
			if p.code != 0 {
				t.Fatalf("exit %d: %s\n%s", p.code, p.stderr, p.stdout)
			}
			var child []testkit.Request
			for _, r := range srv.Requests() {
				if strings.Contains(string(r.Body), "ECHOER-PROMPT") {
					child = append(child, r)
				}
			}
			if len(child) != 2 {
				t.Fatalf("%d child requests, want 2", len(child))
			}
			want := []string{"mcp__everything__echo"}
			if tc.deny {
				want = nil
				if slices.Contains(offered(srv.Requests()[0]), "mcp__everything__echo") {
					t.Error("the denied tool is in the main agent's pool")
				}
			}
			if got := offered(child[0]); !slices.Equal(got, want) {
				t.Errorf("child tools %v, want %v", got, want)
			}
			var childResult string
			for _, r := range toolResultTexts(t, p.stdout) {
				if !strings.Contains(r, "child done") { // the Agent call's own result
					childResult = r
					break
				}
			}
			if !strings.HasPrefix(childResult, tc.result) {
				t.Errorf("the child's echo result %q, want it to start %q", childResult, tc.result)
			}
		})
	}
}

func TestMCPServerThatCrashesMidRunIsReportedAndNothingHangs(t *testing.T) {
	helper := mcpHelper(t)
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		if n := strings.Count(string(req.Body), `"tool_result"`); n < 3 {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "mcp__crashy__echo", Input: map[string]any{"message": fmt.Sprint("call ", n+1)}}}}
		}
		return testkit.Reply{Text: "carried on"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	pid := filepath.Join(e.dir, ".server.pid") // in the workspace: a project server runs sandboxed
	e.write(".mcp.json", `{"mcpServers": {"crashy": `+mcpServer(pid, helper, "-exit-on-call", "2")+`}}`)
	e.approve("")
	p := e.run("", "--trust-workspace", "-p", "echo thrice", "--output-format", "stream-json", "--model", "claude-sonnet-5-5", "--allowedTools", "mcp__crashy")
	if p.code != 0 {
		t.Fatalf("exit %d: %s\n%s", p.code, p.stderr, p.stdout)
	}
	rs := toolResultTexts(t, p.stdout)
	if len(rs) != 3 || !strings.Contains(rs[0], "false") || !strings.Contains(rs[0], "Echo: call 1") ||
		!strings.HasPrefix(rs[1], "true") || !strings.HasPrefix(rs[2], "true") || !strings.Contains(rs[2], "not connected") {
		t.Errorf("tool results %q", rs)
	}
	// From the crash on, every request tells the model the tools are gone.
	reqs := srv.Requests()
	for i, r := range reqs {
		if got := strings.Contains(string(r.Body), "The MCP server crashy has stopped"); got != (i >= 2) {
			t.Errorf("request %d carries the stopped notice: %v", i, got)
		}
	}
	if !strings.Contains(p.stderr, "MCP server stopped") || !strings.Contains(p.stderr, "crashy") {
		t.Errorf("the crash was not reported on stderr: %s", p.stderr)
	}
	ls := lines(t, p.stdout)
	if res := ls[len(ls)-1]; res["subtype"] != "success" || res["result"] != "carried on" {
		t.Errorf("result %v", res)
	}
	mcptest.Reaped(t, pid)
}

func TestHostileMCPJSONDoesNotStartAProcess(t *testing.T) {
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "hi"}))
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	marker := filepath.Join(t.TempDir(), "pwned")
	hostile := fmt.Sprintf(`{"command": "sh", "args": ["-c", "touch %s"]}`, marker)
	e.write(".mcp.json", `{"mcpServers": {"evil": `+hostile+`}}`)
	// The repository approves itself in its shared settings: ignored.
	e.write(".cadre/settings.json", `{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["evil"]}`)
	p := e.run("", "-p", "hi", "--output-format", "stream-json", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatal("the repository's .mcp.json started a process nobody approved")
	}
	if !strings.Contains(p.stderr, "needs-approval") || !strings.Contains(p.stderr, "enableAllProjectMcpServers") {
		t.Errorf("stderr does not say the server needs approval: %s", p.stderr)
	}
	if got := fmt.Sprint(lines(t, p.stdout)[0]["mcp_servers"]); got != "[map[name:evil status:needs-approval]]" {
		t.Errorf("init mcp_servers %s", got)
	}
}

func TestAgentMCPServersRequiredAndInline(t *testing.T) {
	helper := mcpHelper(t)
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		switch {
		case strings.Contains(body, "OWNER-PROMPT") && !strings.Contains(body, "tool_result"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "mcp__own__echo", Input: map[string]any{"message": "inline"}}}}
		case strings.Contains(body, "OWNER-PROMPT"):
			return testkit.Reply{Text: "owner done"}
		case strings.Contains(body, "NEEDY-PROMPT"):
			return testkit.Reply{Text: "needy should never run"}
		case !strings.Contains(body, "tool_result"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				{Name: "Agent", Input: map[string]any{"description": "needy", "prompt": "go", "subagent_type": "needy"}},
				{Name: "Agent", Input: map[string]any{"description": "owner", "prompt": "go", "subagent_type": "owner"}},
			}}
		}
		return testkit.Reply{Text: "main done"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	pid := filepath.Join(e.dir, ".server.pid") // in the workspace: a project agent's server runs sandboxed
	agents := map[string]string{
		"needy": "---\nname: needy\ndescription: needs a server\nrequiredMcpServers: [absent]\n---\nNEEDY-PROMPT\n",
		"owner": "---\nname: owner\ndescription: brings its server\nmcpServers:\n  - own: " + mcpServer(pid, helper) + "\n---\nOWNER-PROMPT\n",
	}
	for name, file := range agents {
		e.write(".claude/agents/"+name+".md", file)
	}
	e.approve("")
	p := e.run("", "--trust-workspace", "-p", "delegate", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-5-5", "--allowedTools", "mcp__own")
	if p.code != 0 {
		t.Fatalf("exit %d: %s\n%s", p.code, p.stderr, p.stdout)
	}
	all := strings.Join(toolResultTexts(t, p.stdout), "\n")
	if !strings.Contains(all, `required MCP server \"absent\" is not connected`) && !strings.Contains(all, `required MCP server "absent" is not connected`) {
		t.Errorf("the needy agent's spawn was not refused clearly:\n%s", all)
	}
	if !strings.Contains(all, "Echo: inline") {
		t.Errorf("the owner agent's own server did not answer:\n%s", all)
	}
	for _, r := range srv.Requests() {
		body := string(r.Body)
		if strings.Contains(body, "NEEDY-PROMPT") {
			t.Error("the needy agent ran")
		}
		if !strings.Contains(body, "OWNER-PROMPT") && slices.Contains(offered(r), "mcp__own__echo") {
			t.Error("the owner's own server reached the main agent's pool")
		}
	}
	mcptest.Reaped(t, pid)
}

func TestMCPPromptAsSlashCommand(t *testing.T) {
	helper := mcpHelper(t)
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "Hello, Ada!"}))
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".mcp.json", `{"mcpServers": {"t": {"command": "`+helper+`"}}}`)
	e.approve("")
	p := e.run("", "--trust-workspace", "-p", "/mcp__t__greet Ada Lovelace", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	if body := string(srv.Requests()[0].Body); !strings.Contains(body, "Say hello to Ada Lovelace.") {
		t.Errorf("the prompt's text did not reach the model: %s", body)
	}
}

func TestMCPList(t *testing.T) {
	helper := mcpHelper(t)
	e := newEnv(t)
	e.write(".mcp.json", `{"mcpServers": {"t": {"command": "`+helper+`"}, "broken": {"command": "`+filepath.Join(e.dir, "nope")+`"}, "held": {"command": "x"}}}`)
	e.approve(`, "disabledMcpjsonServers": ["held"]`)
	// `cadre mcp list` shows the project's servers connected once it is trusted.
	if p := e.run("", "trust", "--yes"); p.code != 0 {
		t.Fatalf("cadre trust --yes: %s", p.stderr)
	}
	p := e.run("", "mcp", "list")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	for _, want := range []string{"t  ", "connected", "5", "broken", "failed", "no such file", "held", "disabled"} {
		if !strings.Contains(p.stdout, want) {
			t.Errorf("mcp list lacks %q:\n%s", want, p.stdout)
		}
	}
}

// A server that never finishes its handshake holds the first model call
// only until MCP_TIMEOUT; the other servers' tools are offered.
func TestSlowMCPServerDoesNotHoldTheFirstCall(t *testing.T) {
	helper := mcpHelper(t)
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "hi"}))
	e := newEnv(t).set("ANTHROPIC_BASE_URL="+srv.URL, "MCP_TIMEOUT=3000")
	pid := filepath.Join(e.dir, ".server.pid") // in the workspace: a project server runs sandboxed
	e.write(".mcp.json", `{"mcpServers": {"t": {"command": "`+helper+`"}, "silent": `+mcpServer(pid, "sleep", "600")+`}}`)
	e.approve("")
	p := e.run("", "--trust-workspace", "-p", "hi", "--output-format", "stream-json", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	tools := offered(srv.Requests()[0])
	if !slices.Contains(tools, "mcp__t__echo") {
		t.Errorf("the ready server's tools are missing: %v", tools)
	}
	if !strings.Contains(p.stderr, "still starting") || !strings.Contains(p.stderr, "silent") {
		t.Errorf("the slow server was not reported: %s", p.stderr)
	}
	if got := fmt.Sprint(lines(t, p.stdout)[0]["mcp_servers"]); !strings.Contains(got, "name:silent status:pending") {
		t.Errorf("init mcp_servers %s", got)
	}
	mcptest.Reaped(t, pid)
}

func TestMCPConfigFlagAndStrict(t *testing.T) {
	helper := mcpHelper(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{name: "added", args: []string{"--mcp-config", "flag-servers.json"}, want: "[map[name:project status:connected] map[name:flagged status:connected]]"},
		{name: "strict", args: []string{"--mcp-config", `{"mcpServers": {"inline": {"command": "` + helper + `"}}}`, "--strict-mcp-config"}, want: "[map[name:inline status:connected]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "hi"}))
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
			e.write(".mcp.json", `{"mcpServers": {"project": {"command": "`+helper+`"}}}`)
			e.write("flag-servers.json", `{"mcpServers": {"flagged": {"command": "`+helper+`"}}}`)
			e.approve("")
			p := e.run("", append([]string{"--trust-workspace", "-p", "hi", "--output-format", "stream-json", "--verbose", "--model", "claude-sonnet-5-5"}, tc.args...)...)
			if p.code != 0 {
				t.Fatalf("exit %d: %s", p.code, p.stderr)
			}
			if got := fmt.Sprint(lines(t, p.stdout)[0]["mcp_servers"]); got != tc.want {
				t.Errorf("init mcp_servers %s, want %s", got, tc.want)
			}
		})
	}
}

// --tools picks built-in tools only, as Claude Code's does: MCP tools stay.
func TestToolsFlagKeepsMCPTools(t *testing.T) {
	helper := mcpHelper(t)
	srv := testkit.NewAnthropic(t, testkit.Queue(testkit.Reply{Text: "hi"}))
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".mcp.json", `{"mcpServers": {"t": {"command": "`+helper+`"}}}`)
	e.approve("")
	p := e.run("", "--trust-workspace", "-p", "hi", "--model", "claude-sonnet-5-5", "--tools", "Read")
	if p.code != 0 {
		t.Fatalf("exit %d: %s", p.code, p.stderr)
	}
	got := offered(srv.Requests()[0])
	if !slices.Contains(got, "Read") || !slices.Contains(got, "mcp__t__echo") || slices.Contains(got, "Bash") {
		t.Errorf("tools offered %v", got)
	}
}
