package runner_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// TestSystemPrompt: one shape for the main agent and children — the
// agent's prompt, the environment, then the closing text.
func TestSystemPrompt(t *testing.T) {
	repo, plain := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	day := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	env := func(dir, git string) string {
		return "<env>\nWorking directory: " + dir + "\nIs directory a git repo: " + git + "\nPlatform: " + runtime.GOOS + "\nToday's date: 2026-03-04\n</env>"
	}
	tests := []struct {
		name, prompt, cwd, closing, want string
	}{
		{"prompt and closing", "  Be brief.\n", repo, "\nAppended.\n", "Be brief.\n\n" + env(repo, "yes") + "\n\nAppended."},
		{"no closing", "Be brief.", plain, "", "Be brief.\n\n" + env(plain, "no")},
		{"no prompt", "", plain, "You are the x agent.", env(plain, "no") + "\n\nYou are the x agent."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, runner.SystemPrompt(tt.prompt, tt.cwd, day, tt.closing)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestLoopConfig: the agent's limits and names reach the loop, and
// compaction is on exactly when configured, its summary calls named for
// the agent and counted through Spent.
func TestLoopConfig(t *testing.T) {
	tools := echoTools(t)
	var asked []string
	m := &llm.ModelFunc{ID: "m", Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		asked = append(asked, req.Agent)
		r := llm.Reply(llm.Text("summary"))
		r.Usage = llm.Usage{InputTokens: 7}
		return r, nil
	}}
	a := runner.Agent{
		Name: "reviewer", Model: m, ModelID: "m", System: "sys", Tools: tools,
		Env: tool.Env{Cwd: "/w", SessionID: "s1"}, MaxTurns: 3, MaxToolInputBytes: 99, Logger: slog.New(slog.DiscardHandler),
	}
	cfg := runner.LoopConfig(a)
	if cfg.Agent != "reviewer" || cfg.System != "sys" || cfg.MaxTurns != 3 || cfg.MaxToolInputBytes != 99 || cfg.Env.SessionID != "s1" || cfg.Tools != tools || cfg.Logger != a.Logger {
		t.Errorf("loop config = %+v", cfg)
	}
	if cfg.Compact != nil {
		t.Error("compaction is on without a Compaction setting")
	}
	var spent llm.Usage
	a.Compaction = &compact.Config{Window: 100, Threshold: 0.5, KeepRecent: 1}
	a.Spent = func(u llm.Usage) { spent = spent.Add(u) }
	cfg = runner.LoopConfig(a)
	if cfg.Compact == nil {
		t.Fatal("compaction is off with a Compaction setting")
	}
	msgs := []llm.Message{llm.UserText(strings.Repeat("a ", 50)), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("b")}}, llm.UserText("c"), {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("d")}}}
	if _, summary, err := cfg.Compact(t.Context(), msgs, llm.Usage{InputTokens: 90}); err != nil || summary == nil {
		t.Fatalf("compaction: summary %v, err %v", summary, err)
	}
	if !cmp.Equal(asked, []string{"reviewer:compact"}) || spent.InputTokens != 7 {
		t.Errorf("summary calls by %v, spent %+v; want one by reviewer:compact, 7 tokens counted", asked, spent)
	}
}
