package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

const auditCommand = `---
description: Audit the code for TODOs
context: fork
allowed-tools: Read, Grep
---
AUDIT-COMMAND: audit $ARGUMENTS for TODOs and report them.
`

func TestForkCommandRunsWithOnlyItsAllowedTools(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		if strings.Contains(string(req.Body), "AUDIT-COMMAND: audit src/ for TODOs") {
			return testkit.Reply{Text: "AUDIT-RESULT: two TODOs"}
		}
		return testkit.Reply{Text: "the main agent should not have been asked"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".claude/commands/audit.md", auditCommand)
	p := e.run("", "-p", "/audit src/", "--model", "claude-sonnet-4-5")
	if p.code != 0 || strings.TrimSpace(p.stdout) != "AUDIT-RESULT: two TODOs" {
		t.Fatalf("exit %d, stdout %q, stderr %q", p.code, p.stdout, p.stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want only the command's child", len(reqs))
	}
	if got := toolNames(reqs[0]); !slices.Equal(got, []string{"Grep", "Read"}) {
		t.Errorf("the command's child was offered %v, want exactly its allowed-tools [Grep Read]", got)
	}
	if !strings.Contains(string(reqs[0].Body), `started by another agent`) {
		t.Error("the command did not run in a child")
	}
}

func TestPlainCommandIsAPromptTemplate(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		if strings.Contains(string(req.Body), "EXPLAIN-COMMAND: explain main.go") {
			return testkit.Reply{Text: "explained"}
		}
		return testkit.Reply{Text: "template not expanded"}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".cadre/commands/explain.md", "---\ndescription: Explain a file\n---\nEXPLAIN-COMMAND: explain $1 briefly.\n")
	p := e.run("", "-p", "/explain main.go", "--model", "claude-sonnet-4-5")
	if p.code != 0 || strings.TrimSpace(p.stdout) != "explained" {
		t.Fatalf("exit %d, stdout %q, stderr %q", p.code, p.stdout, p.stderr)
	}
	unknown := e.run("", "-p", "/nope", "--model", "claude-sonnet-4-5")
	if unknown.code == 0 || !strings.Contains(unknown.stderr, "unknown command /nope") || !strings.Contains(unknown.stderr, "/explain") {
		t.Errorf("unknown command: exit %d, %q", unknown.code, unknown.stderr)
	}
}

// TestUntrustedForkCommandGrantsNothing is issue 22's fork-command grant:
// an untrusted project's `context: fork` command with `allowed-tools:
// Bash` still restricts its child to Bash, but no longer allows it, so
// headless its Bash call is refused; trusted, it runs.
func TestUntrustedForkCommandGrantsNothing(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
			if !strings.Contains(string(req.Body), "tool_result") {
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_b", Name: "Bash", Input: map[string]any{"command": "touch forked-bash"}}}}
			}
			return testkit.Reply{Text: "done"}
		})
		e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
		e.write(".claude/commands/grab.md", "---\ndescription: grab\ncontext: fork\nallowed-tools: Bash\n---\nGRAB\n")
		args := []string{"-p", "/grab", "--model", "claude-sonnet-4-5"}
		if trusted {
			args = append(args, "--trust-workspace")
		}
		p := e.run("", args...)
		_, err := os.Stat(filepath.Join(e.dir, "forked-bash"))
		if ran := err == nil; ran != trusted {
			t.Errorf("trusted=%v: Bash ran = %v\n%s", trusted, ran, p.stderr)
		}
		if !trusted && !strings.Contains(p.stderr, "allowed-tools") {
			t.Errorf("the warning does not name the skipped allowed-tools:\n%s", p.stderr)
		}
	}
}
