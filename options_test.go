package cadre_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// openErr opens a runtime on a fresh project and returns New's error.
func openErr(t *testing.T, opts cadre.Options) error {
	t.Helper()
	home := t.TempDir()
	opts.Cwd = t.TempDir()
	opts.LLM = &llm.ModelFunc{ID: "test:model", Func: func(context.Context, *llm.Request) (*llm.Response, error) {
		return llm.Reply(llm.Text("ok")), nil
	}}
	opts.Getenv = testkit.Home(home)
	rt, err := cadre.New(context.Background(), opts)
	if err == nil {
		rt.Close()
	}
	return err
}

func TestBadAgentDeclarationsAreErrorsNamingAgentAndField(t *testing.T) {
	ok := cadre.Agent{Name: "reviewer", Description: "Reviews code."}
	with := func(f func(a *cadre.Agent)) cadre.Agent {
		a := ok
		f(&a)
		return a
	}
	for _, tc := range []struct {
		name string
		opts cadre.Options
		want []string // all must appear in the error
	}{
		{"isolation", cadre.Options{Agents: []cadre.Agent{with(func(a *cadre.Agent) { a.Isolation = "chroot" })}}, []string{`"reviewer"`, "Isolation"}},
		{"permission mode", cadre.Options{Agents: []cadre.Agent{with(func(a *cadre.Agent) { a.PermissionMode = "yolo" })}}, []string{`"reviewer"`, "PermissionMode"}},
		{"mode", cadre.Options{Agents: []cadre.Agent{with(func(a *cadre.Agent) { a.Mode = "sometimes" })}}, []string{`"reviewer"`, "Mode"}},
		{"no description", cadre.Options{Agents: []cadre.Agent{with(func(a *cadre.Agent) { a.Description = "" })}}, []string{`"reviewer"`, "Description"}},
		{"negative turns", cadre.Options{Agents: []cadre.Agent{with(func(a *cadre.Agent) { a.MaxTurns = -1 })}}, []string{`"reviewer"`, "MaxTurns"}},
		{"task rule", cadre.Options{Agents: []cadre.Agent{with(func(a *cadre.Agent) {
			a.TaskRules = []cadre.TaskRule{{Pattern: "*", Action: "maybe"}}
		})}}, []string{`"reviewer"`, "TaskRules[0]"}},
		{"workspace", cadre.Options{Agents: []cadre.Agent{with(func(a *cadre.Agent) {
			a.Workspace = &cadre.AgentWorkspace{Mode: "elsewhere"}
		})}}, []string{`"reviewer"`, "Workspace.Mode"}},
		{"format", cadre.Options{Agents: []cadre.Agent{with(func(a *cadre.Agent) { a.Format = cadre.AgentFormatClaude })}}, []string{"Options.Agents[0]", `"reviewer"`, "Format"}},
		{"name", cadre.Options{Agents: []cadre.Agent{with(func(a *cadre.Agent) { a.Name = "../etc" })}}, []string{"Name"}},
		{"second of two", cadre.Options{Agents: []cadre.Agent{ok, with(func(a *cadre.Agent) { a.Name, a.Tools = "tester", []string{"Read", " "} })}}, []string{`"tester"`, "Tools[1]"}},
		{"factory fails", cadre.Options{AgentFactories: []func() ([]cadre.Agent, error){func() ([]cadre.Agent, error) {
			return nil, errors.New("registry unreachable")
		}}}, []string{"registry unreachable"}},
		{"factory's definition", cadre.Options{AgentFactories: []func() ([]cadre.Agent, error){func() ([]cadre.Agent, error) {
			return []cadre.Agent{with(func(a *cadre.Agent) { a.Isolation = "chroot" })}, nil
		}}}, []string{`"reviewer"`, "Isolation"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := openErr(t, tc.opts)
			if err == nil {
				t.Fatal("New accepted the declaration")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

func TestDeclaredAgentIsListedWithItsProvenance(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{Agents: []cadre.Agent{{
		Name: "Reviewer", Description: "Reviews code.", Tools: []string{"Read", "Grep"},
		PermissionMode: cadre.PermissionPlan, Isolation: cadre.IsolationWorktree,
		TaskRules: []cadre.TaskRule{{Pattern: "*", Action: cadre.RuleDeny}},
	}}})
	a, ok := rt.Agent("reviewer")
	if !ok {
		t.Fatal("the declared agent is not in effect")
	}
	if a.Name != "reviewer" || a.Format != cadre.AgentFormatSDK || a.PermissionMode != cadre.PermissionPlan ||
		a.Isolation != cadre.IsolationWorktree || len(a.Tools) != 2 || len(a.TaskRules) != 1 || a.TaskRules[0].Action != cadre.RuleDeny {
		t.Errorf("Agent(reviewer) = %+v", a)
	}
	var sources []string
	for _, e := range rt.Agents() {
		sources = append(sources, e.Agent.Name+"="+string(e.Source))
		if e.Agent.Name == "reviewer" && (!e.Active || e.Source != cadre.AgentSourceSDK || e.Err != nil) {
			t.Errorf("entry %+v", e)
		}
	}
	if got := strings.Join(sources, ","); got != "general-purpose=built-in,reviewer=sdk" {
		t.Errorf("entries %s", got)
	}
}

func TestMissingRecordsWrapErrNotFound(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	const id = "0190a000-0000-7000-8000-00000000dead"
	if _, _, err := rt.Session(context.Background(), id); !errors.Is(err, cadre.ErrNotFound) {
		t.Errorf("Session: %v, want ErrNotFound", err)
	}
	if _, err := rt.Task(context.Background(), "a0123456789abcdef"); !errors.Is(err, cadre.ErrNotFound) {
		t.Errorf("Task: %v, want ErrNotFound", err)
	}
}

// syncBuffer is a bytes.Buffer that a logger may write from any goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLoggerHearsHowRunsGo(t *testing.T) {
	f := newFixture(t)
	var logs syncBuffer
	rt := f.open(t, cadre.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	evs := collect(t, rt, cadre.Request{Prompt: "what is the secret word?"})
	sid := evs[0].SessionID
	for _, want := range []string{`msg="runtime opened"`, `msg="run started" session=` + sid, `msg="run ended" session=` + sid} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %s:\n%s", want, logs.String())
		}
	}
}

// What the runtime's parts survive reaches Options.Logger: here the main
// loop's failed compaction, which no event reports.
func TestLoggerHearsTheLoopsWarnings(t *testing.T) {
	f := newFixture(t)
	os.MkdirAll(filepath.Join(f.dir, ".cadre"), 0o755)
	os.WriteFile(filepath.Join(f.dir, ".cadre", "settings.json"), []byte(`{"compaction": {"window": 1000, "threshold": 0.5, "keepRecent": 1}}`), 0o644)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if strings.HasSuffix(req.Agent, ":compact") {
			return nil, errors.New("the summariser is down")
		}
		resp, err := f.model(ctx, req)
		if resp != nil {
			resp.Usage.InputTokens = 900 // past half the window: compact
		}
		return resp, err
	}
	var logs syncBuffer
	rt := f.open(t, cadre.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	evs := collect(t, rt, cadre.Request{Prompt: "what is the secret word?"})
	if res := evs[len(evs)-1].Result; res.IsError {
		t.Fatalf("the run failed: %v", res.Errors)
	}
	if !strings.Contains(logs.String(), "context compaction failed") || !strings.Contains(logs.String(), "the summariser is down") {
		t.Errorf("log lacks the failed compaction:\n%s", logs.String())
	}
}

// A subagent's warnings reach the same logger: its failed compaction is
// logged under its own agent name.
func TestLoggerHearsSubagentsWarnings(t *testing.T) {
	f := newFixture(t)
	os.MkdirAll(filepath.Join(f.dir, ".cadre"), 0o755)
	os.WriteFile(filepath.Join(f.dir, ".cadre", "settings.json"), []byte(`{"compaction": {"window": 1000, "threshold": 0.5, "keepRecent": 1}}`), 0o644)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		switch {
		case req.Agent == "reader:compact":
			return nil, errors.New("the summariser is down")
		case req.Agent == "reader":
			resp, err := f.model(ctx, req)
			if resp != nil {
				resp.Usage.InputTokens = 900
			}
			return resp, err
		case len(req.Messages) == 1:
			return llm.Reply(llm.ToolUse("a1", "Agent", json.RawMessage(`{"subagent_type":"reader","description":"read","prompt":"read notes.txt"}`))), nil
		}
		return llm.Reply(llm.Text("done")), nil
	}
	var logs syncBuffer
	rt := f.open(t, cadre.Options{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Agents: []cadre.Agent{{Name: "reader", Description: "Reads files.", Tools: []string{"Read"}}},
	})
	collect(t, rt, cadre.Request{Prompt: "delegate"})
	if !strings.Contains(logs.String(), "context compaction failed") || !strings.Contains(logs.String(), "agent=reader") {
		t.Errorf("log lacks the subagent's failed compaction:\n%s", logs.String())
	}
}
