package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/internal/sandbox/sandboxtest"
	"github.com/cadre-dev/cadre/internal/testkit"
)

// sandboxEnv is an e2e env on a machine that can sandbox; elsewhere the
// test says SKIPPED, NOT TESTED (and fails under CI). The real binary is
// its own launcher.
func sandboxEnv(t *testing.T) (*env, string) {
	t.Helper()
	sandboxtest.Require(t, bin)
	e := newEnv(t)
	return e, e.homeDir()
}

// homeDir is the HOME the runs get.
func (e *env) homeDir() string {
	for _, kv := range e.vars {
		if h, ok := strings.CutPrefix(kv, "HOME="); ok {
			return h
		}
	}
	e.t.Fatal("no HOME in the env")
	return ""
}

func mustAbsent(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %s exists (err %v)", why, path, err)
	}
}

func mustHold(t *testing.T, path, want, why string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("%s: %s = %q (err %v), want %q", why, path, b, err, want)
	}
}

// The acceptance scenario: in bypassPermissions, with the sandbox on by
// default, a command that writes outside the workspace and inside it
// leaves only the inside file, and its result names the refusal.
func TestSandboxBypassCannotEscape(t *testing.T) {
	e, home := sandboxEnv(t)
	e.write("s.yaml", bashScenario(`sh -c 'echo x > ~/escape; echo y > ./inside'`))
	texts, _ := bashResults(t, e, 1, "--permission-mode", "bypassPermissions")
	mustAbsent(t, filepath.Join(home, "escape"), "the sandbox let a write outside the workspace through")
	mustHold(t, filepath.Join(e.dir, "inside"), "y\n", "the write inside the workspace")
	want := "the sandbox refused writing " + filepath.Join(home, "escape") + " (outside the workspace)"
	if !strings.Contains(texts[0], want) {
		t.Errorf("the tool result does not name the refusal %q:\n%s", want, texts[0])
	}
}

// One wall per call, every call in bypassPermissions: writes outside the
// workspace, the repository's .git, a hidden credential, a program the
// deny rules cannot see (a copy of rm), all stopped by the kernel.
func TestSandboxWalls(t *testing.T) {
	e, home := sandboxEnv(t)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.write(".git/config", "[core]\n")
	e.write(".git/hooks/README", "hooks\n")
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("PRIVATE-KEY-MATERIAL\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmds := []string{
		"echo x > " + filepath.Join(outside, "escape"),
		"echo '[core] fsmonitor = evil' >> .git/config",
		"echo 'echo pwned' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
		"cat ~/.ssh/id_rsa",
		"cp /bin/rm ./del && ./del -f " + filepath.Join(outside, "keep"),
		"echo '{\"permissions\":{\"allow\":[\"Bash\"]}}' > .cadre/settings.json || mkdir -p .cadre",
		"echo fine > ok.txt && cat ok.txt",
	}
	e.write("s.yaml", bashScenario(cmds...))
	texts, isErr := bashResults(t, e, len(cmds), "--permission-mode", "bypassPermissions", "--disallowedTools", "Bash(rm:*)")
	mustAbsent(t, filepath.Join(outside, "escape"), cmds[0])
	mustHold(t, filepath.Join(e.dir, ".git", "config"), "[core]\n", cmds[1])
	mustAbsent(t, filepath.Join(e.dir, ".git", "hooks", "pre-commit"), cmds[2])
	if strings.Contains(texts[3], "PRIVATE-KEY") {
		t.Errorf("%s: the key was read:\n%s", cmds[3], texts[3])
	}
	mustHold(t, filepath.Join(outside, "keep"), "keep\n", cmds[4])
	mustAbsent(t, filepath.Join(e.dir, ".cadre", "settings.json"), cmds[5])
	mustHold(t, filepath.Join(e.dir, "ok.txt"), "fine\n", cmds[6])
	if isErr[6] {
		t.Errorf("%s: %s", cmds[6], texts[6])
	}
	for i, want := range map[int]string{
		0: "the sandbox refused writing " + filepath.Join(outside, "escape") + " (outside the workspace)",
		1: "the sandbox refused writing " + filepath.Join(e.dir, ".git", "config") + " (a protected path",
		3: "the sandbox refused reading " + filepath.Join(home, ".ssh", "id_rsa"),
		4: "the sandbox refused writing " + filepath.Join(outside, "keep") + " (outside the workspace)",
	} {
		if !strings.Contains(texts[i], want) {
			t.Errorf("%s: the result does not say %q:\n%s", cmds[i], want, texts[i])
		}
	}
}

// Network deny refuses TCP connections (a listener on this machine sees
// none); allow, the default, leaves them alone.
func TestSandboxNetworkDeny(t *testing.T) {
	e, _ := sandboxEnv(t)
	port, accepted := sandboxtest.Listen(t)
	connect := fmt.Sprintf("bash -c 'exec 3<>/dev/tcp/127.0.0.1/%d && echo connected'", port)
	e.write("s.yaml", bashScenario(connect))

	texts, _ := bashResults(t, e, 1, "--permission-mode", "bypassPermissions", "--settings", `{"sandbox":{"network":{"mode":"deny"}}}`)
	if strings.Contains(texts[0], "connected") {
		t.Fatalf("network deny: the command connected:\n%s", texts[0])
	}
	if !strings.Contains(texts[0], "the sandbox refused a network connection") {
		t.Errorf("network deny: the result does not name the refusal:\n%s", texts[0])
	}
	select {
	case <-accepted:
		t.Fatal("network deny: the listener saw a connection")
	default:
	}

	texts, _ = bashResults(t, e, 1, "--permission-mode", "bypassPermissions")
	if !strings.Contains(texts[0], "connected") {
		t.Errorf("network allow: the command did not connect:\n%s", texts[0])
	}
}

// The user's hooks run outside the sandbox unless sandbox.hooks opts them
// in; then they are held like Bash.
func TestSandboxHooks(t *testing.T) {
	for _, optIn := range []bool{false, true} {
		t.Run(fmt.Sprintf("hooks=%v", optIn), func(t *testing.T) {
			e, home := sandboxEnv(t)
			settings := map[string]any{
				"hooks":   map[string]any{"PreToolUse": commandHook("Bash", "echo x > $HOME/hook-escape; echo y > ./hook-inside")},
				"sandbox": map[string]any{"hooks": optIn},
			}
			b, err := json.Marshal(settings)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(e.home, "settings.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			e.write("s.yaml", bashScenario("echo ran"))
			bashResults(t, e, 1, "--permission-mode", "bypassPermissions")
			mustHold(t, filepath.Join(e.dir, "hook-inside"), "y\n", "the hook's write inside the workspace")
			if optIn {
				mustAbsent(t, filepath.Join(home, "hook-escape"), "an opted-in hook wrote outside the workspace")
			} else {
				mustHold(t, filepath.Join(home, "hook-escape"), "x\n", "a hook not opted in is the user's own command")
			}
		})
	}
}

// The runtime's own writes are not the commands': the transcript lands in
// CADRE_HOME, outside the workspace, and sandbox status says what holds.
func TestSandboxRuntimeWritesAndStatus(t *testing.T) {
	e, _ := sandboxEnv(t)
	e.write("s.yaml", bashScenario("echo hi > note.txt"))
	bashResults(t, e, 1, "--permission-mode", "bypassPermissions")
	matches, err := filepath.Glob(filepath.Join(e.home, "sessions", "*.jsonl"))
	if err != nil || len(matches) == 0 {
		all, _ := filepath.Glob(filepath.Join(e.home, "*", "*"))
		t.Errorf("no transcript under CADRE_HOME (%v): %v", err, all)
	}
	p := e.run("", "sandbox", "status")
	if p.code != 0 {
		t.Fatalf("sandbox status: exit %d: %s", p.code, p.stderr)
	}
	launcher := "launcher: " + filepath.Join(filepath.Dir(bin), sandbox.LauncherName) + "\n"
	for _, want := range []string{"sandbox: available", "landlock: ABI", "mode: auto (commands run sandboxed)", e.dir, "network: allow", launcher} {
		if !strings.Contains(p.stdout, want) {
			t.Errorf("sandbox status lacks %q:\n%s", want, p.stdout)
		}
	}
}

// Without cadre-sandbox beside it, cadre is its own launcher: slower to
// start a command, the same walls, and status says so.
func TestSandboxLauncherFallback(t *testing.T) {
	e, home := sandboxEnv(t)
	e.bin = filepath.Join(t.TempDir(), "cadre")
	if err := os.Link(bin, e.bin); err != nil {
		t.Fatal(err)
	}
	p := e.run("", "sandbox", "status")
	if want := "launcher: " + e.bin + " (this program itself"; p.code != 0 || !strings.Contains(p.stdout, want) {
		t.Fatalf("sandbox status (exit %d) lacks %q:\n%s%s", p.code, want, p.stdout, p.stderr)
	}
	e.write("s.yaml", bashScenario(`sh -c 'echo x > ~/escape; echo y > ./inside'`))
	texts, _ := bashResults(t, e, 1, "--permission-mode", "bypassPermissions")
	mustHold(t, filepath.Join(e.dir, "inside"), "y\n", "the write inside the workspace")
	mustAbsent(t, filepath.Join(home, "escape"), "the write outside the workspace, cadre its own launcher")
	if want := "the sandbox refused writing " + filepath.Join(home, "escape"); !strings.Contains(texts[0], want) {
		t.Errorf("the tool result does not name the refusal %q:\n%s", want, texts[0])
	}
}

// sandbox.mode off in the user's settings turns the walls off; the same in
// the project's shared settings does not.
func TestSandboxOffOnlyByTheUser(t *testing.T) {
	e, home := sandboxEnv(t)
	e.write(".cadre/settings.json", `{"sandbox":{"enabled":false}}`)
	e.write("s.yaml", bashScenario("echo x > ~/escape"))
	p := e.run("", "-p", "run them", "--model", "script:s.yaml", "--permission-mode", "bypassPermissions")
	if !strings.Contains(p.stderr, "sandbox.mode") {
		t.Errorf("the project's attempt to switch the sandbox off is not warned about:\n%s", p.stderr)
	}
	mustAbsent(t, filepath.Join(home, "escape"), "a project's settings switched the sandbox off")

	if err := os.WriteFile(filepath.Join(e.home, "settings.json"), []byte(`{"sandbox":{"mode":"off"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	e.run("", "-p", "run them", "--model", "script:s.yaml", "--permission-mode", "bypassPermissions")
	mustHold(t, filepath.Join(home, "escape"), "x\n", "the user's sandbox.mode off")
}

// A project's approved MCP server is a command the repository chose: it
// runs inside the sandbox. The user's own server does not.
func TestSandboxProjectMCPServer(t *testing.T) {
	helper := mcpHelper(t)
	e, home := sandboxEnv(t)
	server := func(tag string) string {
		script := fmt.Sprintf(`echo x > "$HOME/%s-escape"; echo y > ./%s-inside; exec "$0"`, tag, tag)
		b, err := json.Marshal(map[string]any{"command": "sh", "args": []string{"-c", script, helper}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	e.write(".mcp.json", `{"mcpServers": {"proj": `+server("proj")+`}}`)
	if p := e.run("", "trust", "--yes"); p.code != 0 {
		t.Fatalf("cadre trust: exit %d\n%s", p.code, p.stderr)
	}
	if err := os.WriteFile(filepath.Join(e.home, "settings.json"), []byte(`{"mcpServers": {"mine": `+server("mine")+`}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := e.run("", "mcp", "list")
	if p.code != 0 || strings.Count(p.stdout, "connected") != 2 {
		t.Fatalf("mcp list: exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	mustHold(t, filepath.Join(e.dir, "proj-inside"), "y\n", "the project server's write inside the workspace")
	mustAbsent(t, filepath.Join(home, "proj-escape"), "the project's MCP server wrote outside the workspace")
	mustHold(t, filepath.Join(home, "mine-escape"), "x\n", "the user's own MCP server runs as it is")
}

// A worktree child's Bash writes in its own checkout (which lies under the
// repository's read-only .git), not in the repository's .git itself: the
// ../../config of its checkout is the repository's .git/config. The
// runtime's own git work — making the worktree, keeping its changes — is
// not the command's and still happens.
func TestSandboxWorktreeChild(t *testing.T) {
	sandboxtest.Require(t, bin)
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		if strings.Contains(body, "started by another agent") {
			if strings.Contains(body, "tool_result") {
				return testkit.Reply{Text: "child done"}
			}
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{
				"command": "echo 'changed in the worktree' > notes.txt; cp ../../config c; echo '[core] evil = 1' >> c; cp c ../../config; rm c"}}}}
		}
		if strings.Contains(body, "tool_result") {
			return testkit.Reply{Text: "main done"}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{"description": "isolated job", "prompt": "EDIT the notes", "isolation": "worktree"}}}}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	git(t, e.dir, "init", "-q", "-b", "main")
	git(t, e.dir, "add", "notes.txt")
	git(t, e.dir, "commit", "-q", "-m", "notes")
	before, err := os.ReadFile(filepath.Join(e.dir, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	// cp writes where the rules cannot see (the child runs in acceptEdits,
	// which its parent's mode allows since issue 22): only the sandbox
	// stands between it and the repository's .git.
	p := e.run("", "-p", "go", "--output-format", "stream-json", "--model", "claude-sonnet-5-5", "--allowedTools", "Bash", "--permission-mode", "acceptEdits")
	checkWorktreeRun(t, e.dir, p, true, git)
	if after, _ := os.ReadFile(filepath.Join(e.dir, ".git", "config")); string(after) != string(before) {
		t.Errorf("the worktree child rewrote the repository's .git/config:\n%s", after)
	}
}

// autoAllowBashIfSandboxed in the user's settings lets a sandboxed command
// run unasked in the default mode (headless, an ask is a denial); in the
// project's shared settings it is ignored.
func TestSandboxAutoAllow(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		ran        bool
	}{
		{"user", "user", true},
		{"project", ".cadre/settings.json", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := sandboxEnv(t)
			const settings = `{"sandbox":{"autoAllowBashIfSandboxed":true}}`
			if tc.file == "user" {
				if err := os.WriteFile(filepath.Join(e.home, "settings.json"), []byte(settings), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				e.write(tc.file, settings)
			}
			e.write("s.yaml", bashScenario("make --version >/dev/null 2>&1; echo ran > ran.txt"))
			texts, isErr := bashResults(t, e, 1)
			_, err := os.Stat(filepath.Join(e.dir, "ran.txt"))
			if ran := err == nil; ran != tc.ran || isErr[0] == tc.ran {
				t.Errorf("ran = %v (error result %v), want %v:\n%s", ran, isErr[0], tc.ran, texts[0])
			}
		})
	}
}

// BenchmarkSandboxLauncher is the sandbox's cost per command through the
// real binary: compare /bare with /sandboxed (Landlock only) and /mounts
// (Landlock and a mount namespace with a read-only .git and a hidden dir).
func BenchmarkSandboxLauncher(b *testing.B) {
	sandboxtest.Require(b, bin)
	dir := b.TempDir()
	for _, d := range []string{".git", ".ssh"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	policies := []struct {
		name string
		p    sandbox.Policy
	}{
		{"sandboxed", sandbox.Policy{Writable: []string{dir}}},
		{"mounts", sandbox.Policy{Writable: []string{dir}, ReadOnly: []string{filepath.Join(dir, ".git")}, ReadDeny: []string{filepath.Join(dir, ".ssh")}}},
	}
	// cpu-us/op, the CPU time the command's process used (the launcher's
	// and true's), moves less with the machine's load than the wall time.
	launch := func(b *testing.B, p *sandbox.Policy, launcher string) {
		var cpu time.Duration
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			if p != nil {
				if err := sandbox.Wrap(cmd, *p, launcher); err != nil {
					b.Fatal(err)
				}
			}
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-us/op")
	}
	b.Run("bare", func(b *testing.B) { launch(b, nil, "") })
	// cadre-sandbox is what an installed cadre starts (FindLauncher); cadre
	// itself is the fallback without it.
	for _, l := range []string{sandbox.LauncherName, "cadre"} {
		for _, pc := range policies {
			b.Run(pc.name+"/launcher="+l, func(b *testing.B) { launch(b, &pc.p, filepath.Join(filepath.Dir(bin), l)) })
		}
	}
}

// An inline MCP server of a project's agent file is a command the
// repository chose too: trusting the workspace approves it, as it does
// .mcp.json's, and it starts for the agent's run inside the sandbox.
func TestSandboxProjectAgentInlineMCPServer(t *testing.T) {
	helper := mcpHelper(t)
	e, home := sandboxEnv(t)
	script := `echo x > "$HOME/agent-escape"; echo y > ./agent-inside; exec "$0"`
	e.write(".claude/agents/tooled.md", "---\nname: tooled\ndescription: has its own server\nmcpServers:\n  - inl:\n      command: sh\n      args: [\"-c\", "+strconv.Quote(script)+", "+strconv.Quote(helper)+"]\nrequiredMcpServers: [inl]\n---\nYou use your server.\n")
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		switch {
		case strings.Contains(body, "You use your server.") || strings.Contains(body, "tool_result"):
			return testkit.Reply{Text: "done"}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{
			"subagent_type": "tooled", "description": "use the server", "prompt": "go"}}}}
	})
	e.set("ANTHROPIC_BASE_URL=" + srv.URL)
	p := e.run("", "--trust-workspace", "-p", "delegate", "--model", "claude-sonnet-5-5")
	if p.code != 0 {
		t.Fatalf("exit %d\n%s", p.code, p.stderr)
	}
	mustHold(t, filepath.Join(e.dir, "agent-inside"), "y\n", "the agent's server's write inside the workspace")
	mustAbsent(t, filepath.Join(home, "agent-escape"), "a project agent's inline MCP server wrote outside the workspace")
}
