package subagent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

// shown is what a test checks of one event.
type shown struct {
	Type                                                 event.Type
	Text                                                 string
	SessionID, ParentToolUseID, AgentID, AgentType, Desc string
}

func show(evs []event.Event) []shown {
	out := make([]shown, 0, len(evs))
	for _, e := range evs {
		if e.Type != event.TypeAssistant && e.Type != event.TypeUser {
			continue // system events (task_started, …) have their own tests
		}
		s := shown{Type: e.Type, SessionID: e.SessionID, ParentToolUseID: e.ParentToolUseID, AgentID: e.AgentID, AgentType: e.AgentType, Desc: e.TaskDescription}
		if e.Message != nil {
			s.Text = e.Message.Text()
			for _, b := range e.Message.Content {
				switch b.Type {
				case llm.BlockToolUse:
					s.Text += "[use " + b.Name + "]"
				case llm.BlockToolResult:
					s.Text += "[result " + b.ToolUseID + "]"
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// TestChildEvents checks S-L1's progress events and the child's session
// record, with the main agent run through the real loop.
func TestChildEvents(t *testing.T) {
	h := newHarness(t, setup{
		agents: map[string]string{"explorer": agentFile("explorer", "Explores", "model: haiku\n", "Explore.")},
		script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			switch {
			case req.Agent == "main" && turn(req) == 0:
				return replyBlocks(use("toolu_spawn", "Agent", AgentInput{Description: "Find the bug", Prompt: "find it", SubagentType: "explorer"})), nil
			case req.Agent == "main":
				return reply("main done"), nil
			case turn(req) == 0:
				return replyBlocks(llm.Text("looking"), use("toolu_read", "Read", fakeIn{FilePath: "a.go"})), nil
			default:
				return reply("found"), nil
			}
		},
	})
	col := h.collect()
	res, c := h.runMain(context.Background(), "fix the bug")
	evs := col.stop(t)
	if res.Err != nil || res.Subtype != loop.SubtypeSuccess {
		t.Fatalf("main run: %s %v", res.Subtype, res.Err)
	}
	root := c.RootSessionID
	children, _ := h.mem.ListSessions(context.Background(), session.Filter{ParentID: &root})
	if len(children) != 1 {
		t.Fatalf("%d child sessions of the main one, want 1", len(children))
	}
	child := children[0]
	id := child.ID

	tag := func(typ event.Type, text string) shown {
		return shown{Type: typ, Text: text, SessionID: root, ParentToolUseID: "toolu_spawn", AgentID: id, AgentType: "explorer", Desc: "Find the bug"}
	}
	want := []shown{
		{Type: event.TypeAssistant, Text: "[use Agent]", SessionID: root},
		tag(event.TypeUser, "find it"),
		tag(event.TypeAssistant, "looking[use Read]"),
		tag(event.TypeUser, "[result toolu_read]"),
		tag(event.TypeAssistant, "found"),
		{Type: event.TypeUser, Text: "[result toolu_spawn]", SessionID: root},
		{Type: event.TypeAssistant, Text: "main done", SessionID: root},
	}
	if d := cmp.Diff(want, show(evs)); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	// The main agent's tool result event carries the Agent result's Meta.
	var meta any
	for _, e := range evs {
		if e.Type == event.TypeUser && e.AgentID == "" {
			meta = e.ToolUseResult
		}
	}
	if m, ok := meta.(map[string]any); !ok || m["agentId"] != id {
		t.Errorf("main's tool result event has ToolUseResult %v, want the child's Meta", meta)
	}

	wantInfo := session.Info{
		ID: id, ParentID: root, Agent: "explorer", Key: "agent:explorer:subagent:" + id, Title: "Find the bug", // the task's description
		Cwd: h.dir, Status: session.StatusCompleted, NumTurns: 2, Usage: llm.Usage{InputTokens: 20, OutputTokens: 10},
		CostUSD: llm.USD((20*1 + 10*2) / 1e6), Model: "test:haiku",
	}
	child.Created, child.Updated, child.TranscriptPath = time.Time{}, time.Time{}, ""
	if d := cmp.Diff(wantInfo, child); d != "" {
		t.Errorf("child session record (-want +got):\n%s", d)
	}
	// The transcript holds the whole child conversation.
	_, history, err := h.sessions.Open(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if got := exchange(history); len(got) != 4 || got[0] != "user: find it" || got[3] != "assistant: found" {
		t.Errorf("child transcript = %q", got)
	}

	// The caller's totals hold the whole tree, by model.
	_, _, byModel := c.Totals.Snapshot()
	wantUsage := llm.Usage{InputTokens: 20, OutputTokens: 10}
	if len(byModel) != 2 || byModel[mainModel].Usage != wantUsage || byModel["haiku"].Usage != wantUsage {
		t.Errorf("totals by model = %+v, want main-model and haiku with %+v each", byModel, wantUsage)
	}
	if byModel["haiku"].CostUSD != wantInfo.CostUSD {
		t.Errorf("haiku cost = %v, want %v", byModel["haiku"].CostUSD, wantInfo.CostUSD)
	}
}

// TestNestedEvents: a grandchild's events carry its own spawning call's
// id and session, under the same root.
func TestNestedEvents(t *testing.T) {
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxSpawnDepth: 2},
		agents: map[string]string{
			"lead":   agentFile("lead", "Delegates", "", "Lead."),
			"worker": agentFile("worker", "Works", "", "Work."),
		},
		script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			switch {
			case req.Agent == "main" && turn(req) == 0:
				return replyBlocks(use("toolu_top", "Agent", AgentInput{Description: "Lead it", Prompt: "lead", SubagentType: "lead"})), nil
			case req.Agent == "lead" && turn(req) == 0:
				return replyBlocks(use("toolu_nested", "Agent", AgentInput{Description: "Do the work", Prompt: "work", SubagentType: "worker"})), nil
			}
			return reply(req.Agent + " done"), nil
		},
	})
	col := h.collect()
	res, c := h.runMain(context.Background(), "go")
	evs := col.stop(t)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	root := c.RootSessionID
	leads, _ := h.mem.ListSessions(context.Background(), session.Filter{ParentID: &root})
	if len(leads) != 1 {
		t.Fatalf("%d children of main, want 1", len(leads))
	}
	lead := leads[0].ID
	workers, _ := h.mem.ListSessions(context.Background(), session.Filter{ParentID: &lead})
	if len(workers) != 1 {
		t.Fatalf("%d children of lead, want 1", len(workers))
	}
	worker := workers[0].ID
	if workers[0].Key != "agent:worker:subagent:"+worker {
		t.Errorf("grandchild key = %q", workers[0].Key)
	}

	leadTag := func(typ event.Type, text string) shown {
		return shown{Type: typ, Text: text, SessionID: root, ParentToolUseID: "toolu_top", AgentID: lead, AgentType: "lead", Desc: "Lead it"}
	}
	workerTag := func(typ event.Type, text string) shown {
		return shown{Type: typ, Text: text, SessionID: root, ParentToolUseID: "toolu_nested", AgentID: worker, AgentType: "worker", Desc: "Do the work"}
	}
	want := []shown{
		{Type: event.TypeAssistant, Text: "[use Agent]", SessionID: root},
		leadTag(event.TypeUser, "lead"),
		leadTag(event.TypeAssistant, "[use Agent]"),
		workerTag(event.TypeUser, "work"),
		workerTag(event.TypeAssistant, "worker done"),
		leadTag(event.TypeUser, "[result toolu_nested]"),
		leadTag(event.TypeAssistant, "lead done"),
		{Type: event.TypeUser, Text: "[result toolu_top]", SessionID: root},
		{Type: event.TypeAssistant, Text: "main done", SessionID: root},
	}
	if d := cmp.Diff(want, show(evs)); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	usage, _, _ := c.Totals.Snapshot()
	if usage.Total() != 5*15 {
		t.Errorf("totals = %d tokens, want %d: two turns each of main and lead, one of worker", usage.Total(), 5*15)
	}
}

// TestParallelSpawns checks S-C2: five spawn calls of one assistant
// message run at the same time. Each child waits at a barrier that opens
// only when all five are inside their model call.
func TestParallelSpawns(t *testing.T) {
	const n = 5
	var (
		mu      sync.Mutex
		arrived int
		allIn   = make(chan struct{})
	)
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if req.Agent == "main" {
			if turn(req) > 0 {
				return reply("all done"), nil
			}
			var calls []llm.Block
			for i := range n {
				calls = append(calls, use(fmt.Sprintf("toolu_p%d", i), "Agent", AgentInput{Description: fmt.Sprintf("part %d", i), Prompt: fmt.Sprintf("part %d", i)}))
			}
			return replyBlocks(calls...), nil
		}
		mu.Lock()
		arrived++
		if arrived == n {
			close(allIn)
		}
		mu.Unlock()
		select {
		case <-allIn:
			return reply("passed the barrier: " + firstUserText(req)), nil
		case <-time.After(waitFor):
			return nil, fmt.Errorf("barrier: only some of the %d children arrived; spawns ran one after another", n)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}})
	res, _ := h.runMain(context.Background(), "split the work")
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	reqs := h.requestsOf("main")
	if len(reqs) != 2 {
		t.Fatalf("main made %d model calls, want 2", len(reqs))
	}
	msgs := reqs[1].req.Messages
	// The per-turn context rides along after the results; it is not one.
	results := slices.DeleteFunc(slices.Clone(msgs[len(msgs)-1].Content), func(b llm.Block) bool { return b.PerTurn })
	if len(results) != n {
		t.Fatalf("%d tool results, want %d", len(results), n)
	}
	for i, b := range results {
		want := fmt.Sprintf("passed the barrier: part %d", i)
		if b.IsError || b.ToolUseID != fmt.Sprintf("toolu_p%d", i) || !strings.Contains(b.ResultText(), want) {
			t.Errorf("result %d (%s, error %v) = %q, want %q", i, b.ToolUseID, b.IsError, b.ResultText(), want)
		}
	}
}
