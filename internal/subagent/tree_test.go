package subagent

import (
	"context"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
)

// TestTaskToolsStayInTheirTree: one process, two sessions; the second's
// task tools cannot read, stop or message the first's agents.
func TestTaskToolsStayInTheirTree(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return reply("done"), nil
	}})
	defer close(release)
	a := h.mainCaller()
	res := h.mustCall(a, "toolu_a", AgentInput{Description: "a's job", Prompt: "work", RunInBackground: true})
	id := res.Meta.(map[string]any)["agentId"].(string)

	b := h.mainCaller()
	b.RootSessionID, b.SessionID = "other-session", "other-session"
	for _, tc := range []struct {
		tool string
		in   any
	}{
		{"TaskOutput", TaskOutputInput{TaskID: id}},
		{"TaskStop", TaskStopInput{TaskID: id}},
		{"SendMessage", SendMessageInput{To: id, Message: "hi", Summary: "hi"}},
	} {
		out, err := h.use(context.Background(), b, tc.tool, tc.in)
		if err != nil || !out.IsError || !strings.Contains(resultText(out), "another session's agents") {
			t.Errorf("%s from another session = %v, %q; want a refusal", tc.tool, err, resultText(out))
		}
	}
	// The owner's own session still reaches it.
	out, err := h.use(context.Background(), a, "TaskOutput", TaskOutputInput{TaskID: id, Block: new(bool)})
	if err != nil || out.IsError {
		t.Errorf("TaskOutput from its own session = %v, %q", err, resultText(out))
	}
}
