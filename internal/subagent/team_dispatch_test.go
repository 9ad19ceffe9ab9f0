package subagent

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/llm"
)

// TestTeammateDispatchedKeepsTheTeam: with store.dispatch any a teammate
// is a background run like any other, a job whichever node has a free
// place takes. The node that runs it — here another than the lead's —
// runs it as the teammate: with the team's tools, working the team's
// list under its name.
func TestTeammateDispatchedKeepsTheTeam(t *testing.T) {
	release, holding := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var tools []string
	var claimed string
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxConcurrent: 1},
		script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			switch {
			case strings.Contains(firstUserText(req), "hold"):
				close(holding)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return reply("held"), nil
			case strings.Contains(firstUserText(req), `You are "alice"`) && turn(req) == 0:
				mu.Lock()
				for _, tl := range req.Tools {
					tools = append(tools, tl.Name)
				}
				mu.Unlock()
				return replyBlocks(use("tu-claim", "TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"})), nil
			case strings.Contains(firstUserText(req), `You are "alice"`):
				mu.Lock()
				claimed = lastToolResult(req)
				mu.Unlock()
				return reply("ALICE-IDLE"), nil
			}
			return reply("ok"), nil
		},
	})
	h.svc.cfg.Teams = true
	cl := newCluster(t, h, 1)
	lead := h.mainCaller()
	if res := h.teamUse(lead, "TaskCreate", map[string]any{"subject": "the one task", "description": "do it"}); res.IsError {
		t.Fatal(resultText(res))
	}
	h.mustCall(lead, "tu-hold", map[string]any{"description": "hold the lane", "prompt": "hold", "run_in_background": true})
	<-holding // node A's one place is taken: alice runs on node B
	res := h.teamUse(lead, "Agent", map[string]any{"description": "join", "prompt": "work", "name": "alice"})
	id, _ := res.Meta.(map[string]any)["teammate_id"].(string)
	if res.IsError || id == "" {
		t.Fatalf("adding alice: %s", resultText(res))
	}
	if text := h.notification(id); !strings.Contains(text, "ALICE-IDLE") {
		t.Fatalf("alice's idle notice: %s", text)
	}
	ctx := context.Background()
	if rec, err := h.svc.cfg.Tasks.GetTask(ctx, id); err != nil || rec.Owner != "node-b" {
		t.Fatalf("alice's record %+v, %v: want it run by node-b", rec, err)
	}
	mu.Lock()
	if !slices.Contains(tools, "TaskUpdate") || !slices.Contains(tools, "ListAgents") || slices.Contains(tools, "Agent") {
		t.Errorf("alice's tools on node B: %v, want the team's and no Agent", tools)
	}
	if !strings.Contains(claimed, "It is yours (alice)") {
		t.Errorf("alice's claim on node B: %q", claimed)
	}
	mu.Unlock()
	l, err := h.svc.cfg.TaskLists.GetList(ctx, lead.RootSessionID)
	if err != nil || len(l.Items) != 1 || l.Items[0].Owner != "alice" {
		t.Errorf("the team's list after alice's claim: %+v, %v", l, err)
	}
	close(release)
	for range 2 {
		if err := <-cl.errs; err != nil {
			t.Fatalf("RunDispatched: %v", err)
		}
	}
}
