package cadre

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// The background children of one message start once the message's last
// Agent call has launched: each child finds every task of the message
// recorded when it first calls its model. Before, the first children ran
// and ended during the launch, and their notifications waited for the
// launching turn to end (the notification p99 at 10,000 children was the
// launch turn).
func TestBackgroundAgentsStartOnceAllAreLaunched(t *testing.T) {
	const n = 200 // more than a batch runs at once
	home, dir := t.TempDir(), t.TempDir()
	var (
		rt       *Runtime
		mu       sync.Mutex
		early    []int // tasks recorded when a child first called its model
		notified int
	)
	model := func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent != "main" {
			recs, err := rt.app.DB.ListTasks(ctx, task.Filter{})
			if err != nil {
				return nil, err
			}
			if len(recs) < n {
				mu.Lock()
				early = append(early, len(recs))
				mu.Unlock()
			}
			return llm.Reply(llm.Text("child done")), nil
		}
		if len(req.Messages) == 1 {
			var calls []llm.Block
			for i := range n {
				calls = append(calls, llm.ToolUse(fmt.Sprintf("toolu_%d", i), "Agent",
					json.RawMessage(fmt.Sprintf(`{"description":"child %d","prompt":"go","run_in_background":true}`, i))))
			}
			return llm.Reply(calls...), nil
		}
		mu.Lock()
		defer mu.Unlock()
		for _, m := range req.Messages[1:] {
			notified += strings.Count(m.Text(), "<task-notification>")
		}
		return llm.Reply(llm.Text("noted")), nil
	}
	rt = funcRuntime(t, home, dir, model)
	runToEnd(t, rt, "fan out")
	mu.Lock()
	defer mu.Unlock()
	if len(early) > 0 {
		t.Errorf("%d children started before their message's %d launches were recorded (they saw %v)", len(early), n, early[:min(len(early), 5)])
	}
	if notified == 0 {
		t.Error("the main agent saw no notification")
	}
}
