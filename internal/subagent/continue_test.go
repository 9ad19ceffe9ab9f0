package subagent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

// exchange is a conversation reduced to role and text, for diffs.
func exchange(msgs []llm.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role) + ": " + m.Text()
	}
	return out
}

// TestContinue checks that session_id continues a child with its history.
func TestContinue(t *testing.T) {
	h := newHarness(t, setup{
		agents: map[string]string{"explorer": agentFile("explorer", "Explores", "", "Explore.")},
		script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			return reply(fmt.Sprintf("reply %d", turn(req)+1)), nil
		},
	})
	c := h.mainCaller()
	first := h.mustCall(c, "toolu_1", AgentInput{Description: "look", Prompt: "first task", SubagentType: "explorer"})
	id := childID(t, first)

	second := h.mustCall(c, "toolu_2", AgentInput{Description: "look more", Prompt: "second task", SessionID: id})
	if second.IsError {
		t.Fatalf("continue failed: %s", resultText(second))
	}
	if d := cmp.Diff(framed("reply 2")+trailer(id, 15, 0), resultText(second)); d != "" {
		t.Errorf("continued result (-want +got):\n%s", d)
	}
	reqs := h.requestsOf("explorer")
	if len(reqs) != 2 {
		t.Fatalf("explorer made %d requests, want 2", len(reqs))
	}
	want := []string{"user: first task", "assistant: reply 1", "user: second task"}
	if d := cmp.Diff(want, exchange(reqs[1].req.Messages)); d != "" {
		t.Errorf("second child request (-want +got):\n%s", d)
	}
	// The same type, in any case, is accepted.
	third := h.mustCall(c, "toolu_3", AgentInput{Description: "again", Prompt: "third task", SubagentType: "Explorer", SessionID: id})
	if third.IsError || childID(t, third) != id {
		t.Errorf("continue with the same subagent_type: %s", resultText(third))
	}
	info, err := h.mem.GetSession(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if info.NumTurns != 3 || info.Usage.Total() != 45 {
		t.Errorf("child session has %d turns and %d tokens, want 3 and 45 over three runs", info.NumTurns, info.Usage.Total())
	}
}

// TestContinueRefused checks the session_id errors.
func TestContinueRefused(t *testing.T) {
	h := newHarness(t, setup{
		agents: map[string]string{
			"explorer": agentFile("explorer", "Explores", "", "Explore."),
			"secret":   agentFile("secret", "Secret", "", "Secret."),
		},
	})
	c := h.mainCaller()
	gp := childID(t, h.mustCall(c, "toolu_1", AgentInput{Description: "gp", Prompt: "go"}))
	sec := childID(t, h.mustCall(c, "toolu_2", AgentInput{Description: "sec", Prompt: "go", SubagentType: "secret"}))

	tests := []struct {
		name string
		in   AgentInput
		deny bool // deny secret in a second service sharing the store
		want string
	}{
		{"unknown id", AgentInput{SessionID: "0198c0de-0000-7000-8000-000000000000"}, false,
			`no agent session "0198c0de-0000-7000-8000-000000000000" to continue`},
		{"invalid id", AgentInput{SessionID: "../etc/passwd"}, false, "invalid session_id"},
		{"a main session", AgentInput{SessionID: h.mainID}, false, `session "main-session-1" is a main session, not an agent's`},
		{"another agent's session", AgentInput{SessionID: gp, SubagentType: "explorer"}, false,
			fmt.Sprintf(`session %q belongs to agent "general-purpose", not "explorer"`, gp)},
		{"an agent now denied", AgentInput{SessionID: sec}, true, `Permission to use Agent denied (permissions.task "secret": "deny")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Description, tt.in.Prompt = "continue", "more"
			svc := h.svc
			if tt.deny {
				pol := h.policy
				pol.Task = permission.TaskRules{{Pattern: "secret", Action: permission.ActionDeny}}
				cfg := h.svc.cfg
				cfg.Policy = pol
				var err error
				if svc, err = New(cfg); err != nil {
					t.Fatal(err)
				}
			}
			before := len(h.requestsOf("general-purpose")) + len(h.requestsOf("secret"))
			res, err := svc.Tools(c)[0].Call(context.Background(), envFor(c, "toolu_x"), mustJSON(t, tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(resultText(res), tt.want) {
				t.Errorf("result (error %v) = %q, want an error with %q", res.IsError, resultText(res), tt.want)
			}
			if after := len(h.requestsOf("general-purpose")) + len(h.requestsOf("secret")); after != before {
				t.Errorf("a refused continuation ran a model")
			}
		})
	}
}

// TestContinueRunning: a child still running cannot be continued by a
// second call; once it has finished it can.
func TestContinueRunning(t *testing.T) {
	inside := make(chan struct{})
	release := make(chan struct{})
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if firstUserText(req) == "block" && turn(req) == 0 {
			close(inside)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return reply("finished"), nil
	}})
	c := h.mainCaller()
	sub := h.bus.Subscribe(func(e event.Event) bool { return e.AgentID != "" })
	defer sub.Close()
	done := make(chan string, 1)
	go func() {
		res, err := h.call(context.Background(), c, "toolu_1", AgentInput{Description: "slow", Prompt: "block"})
		if err != nil {
			done <- err.Error()
			return
		}
		done <- resultText(res)
	}()
	select {
	case <-inside:
	case <-time.After(waitFor):
		close(release)
		t.Fatal("the child's model was never called")
	}
	// The child's prompt event carries its session id.
	var id string
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for e := range sub.Events(ctx) {
		id = e.AgentID
		break
	}
	if id == "" {
		close(release)
		t.Fatal("no event named the running child")
	}
	res := h.mustCall(c, "toolu_2", AgentInput{Description: "poke", Prompt: "are you done?", SessionID: id})
	if !res.IsError || !strings.Contains(resultText(res), id) || !strings.Contains(resultText(res), "is still running") {
		t.Errorf("continuing a running child: %q", resultText(res))
	}
	close(release)
	select {
	case text := <-done:
		if !strings.HasPrefix(text, framed("finished")) {
			t.Errorf("first call ended with %q", text)
		}
	case <-time.After(waitFor):
		t.Fatal("the first call never finished")
	}
	res = h.mustCall(c, "toolu_3", AgentInput{Description: "poke", Prompt: "now?", SessionID: id})
	if res.IsError {
		t.Errorf("continuing the finished child failed: %s", resultText(res))
	}
}
