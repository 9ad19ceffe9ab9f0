package cadre_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre"
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
	opts.Getenv = func(k string) string {
		if k == "CADRE_HOME" {
			return home
		}
		return ""
	}
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
