package cadre_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// TestReplayPinsASubagent is docs/replay.md's worked example: a run in
// which the main agent asks a reviewer subagent to look for TODOs is
// recorded once, then cadre.Replay checks that the reviewer still does
// the same on the same code, and names the call that changed when it
// does not.
func TestReplayPinsASubagent(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIPPED, NOT TESTED: git is not installed (a replay runs in a scratch git worktree)")
	}
	ctx := context.Background()
	dir, home := t.TempDir(), t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=test", "-c", "user.email=test@localhost"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write("stock.go", "package stock\n\n// TODO: reject negative counts.\n")
	gitRun("init", "--quiet")
	gitRun("add", "--all")
	gitRun("commit", "--quiet", "-m", "fixture")

	opts := cadre.Options{
		Cwd:    dir,
		Getenv: func(k string) string { return map[string]string{"CADRE_HOME": home}[k] },
		Agents: []cadre.Agent{{
			Name: "reviewer", Description: "Finds TODOs.", Prompt: "You find TODOs.", Tools: []string{"Grep"},
		}},
	}

	// 1. Record: the model is a Go function here; a real model works the
	// same, since the replay never calls it.
	opts.LLM = &llm.ModelFunc{ID: "recording", Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		answered := len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult
		switch {
		case req.Agent == "reviewer" && !answered:
			return llm.Reply(llm.ToolUse("call-1", "Grep", json.RawMessage(`{"pattern": "TODO", "output_mode": "content"}`))), nil
		case req.Agent == "reviewer":
			return llm.Reply(llm.Text("Found: " + last.Content[0].ResultText())), nil
		case !answered:
			return llm.Reply(llm.ToolUse("call-1", "Agent", json.RawMessage(`{"subagent_type": "reviewer", "description": "Find TODOs", "prompt": "List the TODOs."}`))), nil
		}
		return llm.Reply(llm.Text("The reviewer reported.")), nil
	}}
	rt, err := cadre.New(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var session string
	for ev, err := range rt.Run(ctx, cadre.Request{Prompt: "Review the stock package."}) {
		if err != nil {
			t.Fatal(err)
		}
		session = ev.SessionID
	}
	rt.Close()

	// 2. Replay: the recorded turns are fed back, Grep runs again in a
	// scratch worktree, and nothing differs.
	opts.LLM = nil
	rep, err := cadre.Replay(ctx, cadre.ReplayOptions{Options: opts, Session: session})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Diverged || rep.TurnsReplayed != 4 {
		t.Fatalf("faithful replay: diverged %v (%v), %d turns fed, want 4", rep.Diverged, rep.Divergences, rep.TurnsReplayed)
	}

	// 3. The code changes: the reviewer's Grep finds something else, and
	// the report says where.
	write("stock.go", "package stock\n\n// TODO: reject negative counts.\n// TODO: log refusals.\n")
	rep, err = cadre.Replay(ctx, cadre.ReplayOptions{Options: opts, Session: session})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Diverged {
		t.Fatal("the changed file went unnoticed")
	}
	d := rep.Divergences[0]
	if d.Kind != cadre.DivergedToolResult || d.Agent != "reviewer" || d.Turn != 1 || d.Tool != "Grep" || d.ToolUseID != "call-1" ||
		!strings.Contains(d.Diff, "+"+filepath.Join(dir, "stock.go")+":4:// TODO: log refusals.") {
		t.Errorf("first divergence: %s\n%s", d, d.Diff)
	}
}
