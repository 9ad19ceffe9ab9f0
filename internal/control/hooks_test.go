package control

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/google/go-cmp/cmp"
)

// fakePeer answers hook callbacks from a table and records the calls.
type fakePeer struct {
	answers map[string]string // by callback id; missing: an error
	calls   []string
}

func (p *fakePeer) Ask(context.Context, Ask) (Answer, error) {
	return Answer{}, errors.New("not asked")
}
func (p *fakePeer) Hook(_ context.Context, id string, input json.RawMessage, toolUseID string) (json.RawMessage, error) {
	p.calls = append(p.calls, id+" "+toolUseID+" "+string(input))
	a, ok := p.answers[id]
	if !ok {
		return nil, errors.New("the program failed")
	}
	return json.RawMessage(a), nil
}

func TestHooksCallTheProgram(t *testing.T) {
	peer := &fakePeer{answers: map[string]string{
		"hook_0": `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not today"}}`,
		"hook_2": `{}`,
	}}
	var warnings []string
	got := hooks(map[string][]HookMatcher{
		"PreToolUse":        {{Matcher: "Bash", HookCallbackIDs: []string{"hook_0"}, Timeout: 5}},
		"Stop":              {{HookCallbackIDs: []string{"hook_1"}}, {HookCallbackIDs: []string{"hook_3"}, OnFailure: "block"}},
		"PostToolUse":       {{HookCallbackIDs: []string{"hook_2"}}},
		"PermissionRequest": {{HookCallbackIDs: []string{"hook_9"}}},
	}, peer, func(s string) { warnings = append(warnings, s) })

	if len(got) != 3 || len(got[cadre.HookStop]) != 2 {
		t.Fatalf("hooks = %v", got)
	}
	if diff := cmp.Diff([]string{"initialize: hooks for PermissionRequest are not run: cadre has no such hook event"}, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	pre := got[cadre.HookPreToolUse][0]
	if pre.Matcher != "Bash" || pre.Timeout != 5*time.Second {
		t.Errorf("PreToolUse matcher = %+v", pre)
	}
	in := cadre.HookInput{Event: cadre.HookPreToolUse, ToolName: "Bash", ToolUseID: "toolu_1", Raw: json.RawMessage(`{"hook_event_name":"PreToolUse","tool_name":"Bash"}`)}
	out, err := pre.Hooks[0](context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if hs := out.HookSpecificOutput; hs == nil || hs.PermissionDecision != "deny" || hs.PermissionDecisionReason != "not today" {
		t.Errorf("output = %+v: the program's decision must come back", out)
	}
	if diff := cmp.Diff([]string{`hook_0 toolu_1 {"hook_event_name":"PreToolUse","tool_name":"Bash"}`}, peer.calls); diff != "" {
		t.Errorf("hook_callback sent (-want +got):\n%s", diff)
	}
	// A failing callback: an error (the event goes on) or, with
	// onFailure "block", a block.
	stop := got[cadre.HookStop]
	if _, err := stop[0].Hooks[0](context.Background(), cadre.HookInput{Event: cadre.HookStop}); err == nil {
		t.Error("a failed callback must be an error")
	}
	out, err = stop[1].Hooks[0](context.Background(), cadre.HookInput{Event: cadre.HookStop})
	if err != nil || out.Decision != "block" {
		t.Errorf("onFailure block: %+v, %v", out, err)
	}
	// Without Raw the input is encoded from its fields, as a command hook
	// reads it: Claude Code's keys in Claude Code's order.
	if _, err := got[cadre.HookPostToolUse][0].Hooks[0](context.Background(), cadre.HookInput{Event: cadre.HookPostToolUse, ToolName: "Read"}); err != nil {
		t.Fatal(err)
	}
	if last := peer.calls[len(peer.calls)-1]; last != `hook_2  {"session_id":"","transcript_path":"","cwd":"","hook_event_name":"PostToolUse","tool_name":"Read"}` {
		t.Errorf("encoded input: %s", last)
	}
}
