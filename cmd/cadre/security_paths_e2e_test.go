package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// Attacks on the path side of the permission boundary (issue 8, items 2,
// 3 and 5, and the task output file), through the real binary against a
// fake Anthropic server.

// results maps each tool_use id of the calls named name, in every request
// the server saw, to its result; errs says which were errors.
func pathResults(srv *testkit.AnthropicServer, child bool, name string) (texts []string, errs []bool) {
	mains, children := bgCalls(srv)
	calls := mains
	if child {
		calls = children
	}
	seen := map[string]bool{}
	for _, c := range calls {
		for _, r := range c.results(name) {
			if !seen[r.ToolUseID] {
				seen[r.ToolUseID] = true
				texts, errs = append(texts, r.resultText()), append(errs, r.IsError)
			}
		}
	}
	return texts, errs
}

// allBodies is every request body the server saw, for "never reached the
// model" checks.
func allBodies(srv *testkit.AnthropicServer) string {
	var b strings.Builder
	for _, r := range srv.Requests() {
		b.Write(r.Body)
	}
	return b.String()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// (a) A default-mode parent's child runs in acceptEdits. It may not write
// the files that would widen the next run's permissions, start MCP
// servers or hook git; the next run is not in bypassPermissions.
func TestChildCannotWritePermissionBearingFiles(t *testing.T) {
	protected := map[string]string{
		".cadre/settings.local.json": `{"permissions": {"defaultMode": "bypassPermissions"}}`,
		".cadre/settings.json":       `{"permissions": {"allow": ["Bash"]}}`,
		".claude/settings.json":      `{"permissions": {"allow": ["Bash"]}}`,
		".claude/agents/evil.md":     "---\nname: evil\ndescription: x\n---\nx\n",
		".mcp.json":                  `{"mcpServers": {"x": {"command": "touch", "args": ["/tmp/pwned"]}}}`,
		".git/hooks/pre-commit":      "#!/bin/sh\ntouch /tmp/pwned\n",
	}
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && !c.anyToolResult():
			var calls []testkit.ToolCall
			for path, content := range protected {
				calls = append(calls, testkit.ToolCall{Name: "Write", Input: map[string]any{"file_path": path, "content": content}})
			}
			// The control: an ordinary file, which acceptEdits allows.
			calls = append(calls, testkit.ToolCall{Name: "Write", Input: map[string]any{"file_path": "ordinary.txt", "content": "fine\n"}})
			return testkit.Reply{ToolCalls: calls}
		case c.child():
			return testkit.Reply{Text: "child done"}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{
				"description": "configure", "prompt": "set things up", "subagent_type": "general-purpose"}}}}
		}
		return testkit.Reply{Text: "main done"}
	}))
	ok(t, e.run("", "-p", "set up the project", "--model", sonnet, "--output-format", "stream-json", "--permission-mode", "acceptEdits"))

	if !exists(filepath.Join(e.dir, "ordinary.txt")) {
		t.Fatal("the child could not write an ordinary file: it is not in acceptEdits, and this test proves nothing")
	}
	for path := range protected {
		if exists(filepath.Join(e.dir, path)) {
			t.Errorf("the child wrote %s", path)
		}
	}
	texts, errs := pathResults(srv, true, "Write")
	if len(texts) != len(protected)+1 {
		t.Fatalf("%d Write results, want %d: %q", len(texts), len(protected)+1, texts)
	}
	denied := 0
	for i, txt := range texts {
		if errs[i] && strings.Contains(txt, "always needs the user's approval") {
			denied++
		}
	}
	if denied != len(protected) {
		t.Errorf("%d writes denied with the protection named, want %d: %q", denied, len(protected), texts)
	}

	// The next run is in the mode the user chose, not one a child chose.
	e2, _ := anthropicEnv(t, func(testkit.Request) testkit.Reply { return testkit.Reply{Text: "hi"} })
	e2.dir = e.dir
	next := ok(t, e2.run("", "-p", "hello", "--model", sonnet, "--output-format", "stream-json", "--verbose"))
	if mode := lines(t, next.stdout)[0]["permissionMode"]; mode != "default" {
		t.Errorf("the next run's permission mode is %v, want default", mode)
	}
}

// (b) The Agent tool's cwd cannot make a child whose workspace is
// anything: outside the parent's workspace it is refused, and no child
// starts.
func TestAgentCwdMustStayInTheWorkspace(t *testing.T) {
	elsewhere := t.TempDir()
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "CHILD-RAN in " + strings.Join(regexp.MustCompile(`Working directory: \S+`).FindAllString(c.system, 1), "")}
		case len(c.uses("Agent")) == 0:
			var calls []testkit.ToolCall
			for _, cwd := range []string{"/", "..", elsewhere, "sub/../.."} {
				calls = append(calls, testkit.ToolCall{Name: "Agent", Input: map[string]any{
					"description": "escape", "prompt": "look around", "subagent_type": "general-purpose", "cwd": cwd}})
			}
			return testkit.Reply{ToolCalls: calls}
		}
		return testkit.Reply{Text: "main done"}
	}))
	e.write("sub/a.txt", "a\n")
	ok(t, e.run("", "-p", "go", "--model", sonnet, "--output-format", "stream-json"))
	texts, errs := pathResults(srv, false, "Agent")
	if len(texts) != 4 {
		t.Fatalf("%d Agent results, want 4: %q", len(texts), texts)
	}
	for i, txt := range texts {
		if !errs[i] || !strings.Contains(txt, "outside the workspace") {
			t.Errorf("Agent call %d: error %v, %q; want refused as outside the workspace", i, errs[i], txt)
		}
	}
	if _, children := bgCalls(srv); len(children) != 0 {
		t.Errorf("%d child requests: a child started outside the workspace", len(children))
	}
}

// (c) A symbolic link inside the workspace leads out of it: reads and
// changes through it are not "inside the workspace", even in acceptEdits.
func TestSymlinkOutOfTheWorkspace(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("OUTSIDE-SECRET\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if c.anyToolResult() {
			return testkit.Reply{Text: "done"}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{
			{Name: "Read", Input: map[string]any{"file_path": "link/secret.txt"}},
			{Name: "Read", Input: map[string]any{"file_path": "flink"}},
			{Name: "Grep", Input: map[string]any{"pattern": "SECRET", "path": "link", "output_mode": "content"}},
			{Name: "Write", Input: map[string]any{"file_path": "link/planted.txt", "content": "x\n"}},
			{Name: "Edit", Input: map[string]any{"file_path": "flink", "old_string": "OUTSIDE-SECRET", "new_string": "CHANGED"}},
			{Name: "Write", Input: map[string]any{"file_path": "dangling", "content": "x\n"}},
			{Name: "Write", Input: map[string]any{"file_path": "ordinary.txt", "content": "fine\n"}},
		}}
	}))
	for link, dest := range map[string]string{"link": outside, "flink": secret, "dangling": filepath.Join(outside, "created.txt")} {
		if err := os.Symlink(dest, filepath.Join(e.dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	ok(t, e.run("", "-p", "go", "--model", sonnet, "--output-format", "stream-json", "--permission-mode", "acceptEdits"))

	if !exists(filepath.Join(e.dir, "ordinary.txt")) {
		t.Fatal("an ordinary write failed: not in acceptEdits, and this test proves nothing")
	}
	for _, name := range []string{"Read", "Grep", "Write", "Edit"} {
		texts, errs := pathResults(srv, false, name)
		for i, txt := range texts {
			if strings.Contains(txt, "ordinary.txt") {
				continue
			}
			if !errs[i] || !strings.Contains(txt, "outside the workspace") {
				t.Errorf("%s through a link: error %v, %q; want refused as outside the workspace", name, errs[i], txt)
			}
		}
	}
	if strings.Contains(allBodies(srv), "OUTSIDE-SECRET\\n") || strings.Contains(allBodies(srv), "1\\tOUTSIDE") {
		t.Error("the outside file's content reached the model")
	}
	if b, _ := os.ReadFile(secret); string(b) != "OUTSIDE-SECRET\n" {
		t.Errorf("the outside file was changed: %q", b)
	}
	for _, f := range []string{"planted.txt", "created.txt"} {
		if exists(filepath.Join(outside, f)) {
			t.Errorf("%s was written outside the workspace", f)
		}
	}
}

// (d) Read(./secret.txt) is anchored to the project: a child started in a
// subfolder cannot read it as ../secret.txt.
func TestDenyRuleHoldsForAChildInASubfolder(t *testing.T) {
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && !c.anyToolResult():
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				{Name: "Read", Input: map[string]any{"file_path": "../secret.txt"}},
				{Name: "Read", Input: map[string]any{"file_path": "own.txt"}},
			}}
		case c.child():
			return testkit.Reply{Text: "child done"}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{
				"description": "read", "prompt": "read the secret", "subagent_type": "general-purpose", "cwd": "sub"}}}}
		}
		return testkit.Reply{Text: "main done"}
	}))
	e.write("secret.txt", "TOP-SECRET-VALUE\n")
	e.write("sub/own.txt", "SUB-FILE\n")
	e.write(".cadre/settings.json", `{"permissions": {"deny": ["Read(./secret.txt)"]}}`)
	ok(t, e.run("", "-p", "go", "--model", sonnet, "--output-format", "stream-json"))

	texts, errs := pathResults(srv, true, "Read")
	if len(texts) != 2 {
		t.Fatalf("%d child Read results, want 2: %q", len(texts), texts)
	}
	if !errs[0] || !strings.Contains(texts[0], `Read(./secret.txt)`) {
		t.Errorf("../secret.txt from sub: error %v, %q; want denied by Read(./secret.txt)", errs[0], texts[0])
	}
	if errs[1] || !strings.Contains(texts[1], "SUB-FILE") {
		t.Errorf("the child could not read its own folder: %q", texts[1])
	}
	if strings.Contains(allBodies(srv), "TOP-SECRET-VALUE") {
		t.Error("the denied file's content reached the model")
	}
}

// (e) A Read deny keeps the file out of Grep results and Glob and LS
// listings.
func TestReadDenyHidesFilesFromSearches(t *testing.T) {
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if c.anyToolResult() {
			return testkit.Reply{Text: "done"}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{
			{Name: "Grep", Input: map[string]any{"pattern": "SECRET", "path": ".", "output_mode": "content"}},
			{Name: "Grep", Input: map[string]any{"pattern": "SECRET"}},
			{Name: "Glob", Input: map[string]any{"pattern": "**/*"}},
			{Name: "Glob", Input: map[string]any{"pattern": "**/.env"}},
			{Name: "LS", Input: map[string]any{"path": "."}},
		}}
	}))
	e.write(".env", "API_KEY=DOTENV-SECRET-VALUE\n")
	e.write("config/.env", "API_KEY=NESTED-SECRET-VALUE\n")
	e.write("public.txt", "NOT-A-SECRET\n")
	e.write(".cadre/settings.json", `{"permissions": {"deny": ["Read(.env)"]}}`)
	ok(t, e.run("", "-p", "go", "--model", sonnet, "--output-format", "stream-json"))

	var all []string
	for _, name := range []string{"Grep", "Glob", "LS"} {
		texts, errs := pathResults(srv, false, name)
		for i, txt := range texts {
			if errs[i] {
				t.Errorf("%s failed: %q", name, txt)
			}
			all = append(all, name+": "+txt)
		}
	}
	if len(all) != 5 {
		t.Fatalf("%d results, want 5: %q", len(all), all)
	}
	out := strings.Join(all, "\n")
	if !strings.Contains(out, "public.txt") || !strings.Contains(out, "NOT-A-SECRET") {
		t.Errorf("the searches did not show the allowed file:\n%s", out)
	}
	for _, bad := range []string{".env", "DOTENV-SECRET-VALUE", "NESTED-SECRET-VALUE"} {
		if strings.Contains(out, bad) {
			t.Errorf("a search showed %q:\n%s", bad, out)
		}
	}
}

var outputFileRE = regexp.MustCompile(`written to (\S+\.output);`)

// (f) The launch text tells the model to Read the task's output file; in
// default mode that Read is allowed for the session that started the
// task, and not for another session.
func TestOwnTaskOutputFileIsReadable(t *testing.T) {
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		first := c.msgs[0].Blocks[0].Text
		switch {
		case c.child():
			return testkit.Reply{Text: "CHILD-RESULT"}
		case strings.HasPrefix(first, "READ "):
			// Another session, handed the path.
			if c.anyToolResult() {
				return testkit.Reply{Text: "other done"}
			}
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": strings.TrimPrefix(first, "READ ")}}}}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall("toolu_bg_out", "work", "do the work")}}
		case len(c.uses("Read")) == 0:
			// Read before anything else: a fast child's notification may
			// already ride along with the launch result.
			res := c.results("Agent")
			m := outputFileRE.FindStringSubmatch(res[0].resultText())
			if m == nil {
				return testkit.Reply{Text: "TEST-HARNESS-ERROR: no output file in the launch text: " + res[0].resultText()}
			}
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": m[1]}}}}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "notified"}
		}
		return testkit.Reply{Text: "read it"}
	}))
	ok(t, e.run("", "-p", "work in the background", "--model", sonnet, "--output-format", "stream-json"))
	texts, errs := pathResults(srv, false, "Read")
	if len(texts) != 1 {
		t.Fatalf("%d Read results, want 1: %q", len(texts), texts)
	}
	if errs[0] || strings.Contains(texts[0], "Permission") {
		t.Fatalf("the session could not read its own task's output file: %q", texts[0])
	}
	mains, _ := bgCalls(srv)
	var path string
	for _, c := range mains {
		if u := c.uses("Read"); len(u) > 0 {
			path = u[0].Input["file_path"].(string)
		}
	}
	if !strings.HasPrefix(path, e.home) {
		t.Fatalf("output file %q is not in CADRE_HOME %s", path, e.home)
	}

	// Another session of the same project and state dir may not.
	before := len(srv.Requests())
	ok(t, e.run("", "-p", "READ "+path, "--model", sonnet, "--output-format", "stream-json"))
	var other []string
	var otherErr []bool
	for _, r := range srv.Requests()[before:] {
		for _, b := range bgDecode(r).results("Read") {
			other, otherErr = append(other, b.resultText()), append(otherErr, b.IsError)
		}
	}
	if len(other) != 1 || !otherErr[0] || !strings.Contains(other[0], "outside the workspace") {
		t.Errorf("another session read the task's output file: %q", other)
	}
}
