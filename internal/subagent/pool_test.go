package subagent

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
)

// TestChildToolPool checks S-P2: the tools a child's model is offered.
func TestChildToolPool(t *testing.T) {
	const desc = "Probes its tools"
	tests := []struct {
		name      string
		front     string // the probe agent's extra frontmatter
		subagents config.Subagents
		deny      []string
		want      []string
	}{
		{
			name:  "tools list is exactly those",
			front: "tools: Read, Grep\n",
			want:  []string{"Read", "Grep"},
		},
		{
			name: "no tools field means every base tool, and a leaf gets no Agent",
			want: []string{"Read", "Grep", "Glob", "Edit", "Bash"},
		},
		{
			name:  "tools * means every base tool",
			front: "tools: \"*\"\n",
			want:  []string{"Read", "Grep", "Glob", "Edit", "Bash"},
		},
		{
			name:  "empty tools list means none",
			front: "tools: []\n",
			want:  []string{},
		},
		{
			name:  "a tools entry with a specifier names its tool",
			front: "tools: Read, Bash(git:*)\n",
			want:  []string{"Read", "Bash"},
		},
		{
			name:  "disallowedTools removes",
			front: "disallowedTools: Edit, Bash\n",
			want:  []string{"Read", "Grep", "Glob"},
		},
		{
			name:  "disallowedTools wins over tools",
			front: "tools: Read, Edit\ndisallowedTools: Edit\n",
			want:  []string{"Read"},
		},
		{
			name:      "subagents.tools.deny removes",
			subagents: config.Subagents{Tools: config.SubagentTools{Deny: []string{"Bash"}}},
			want:      []string{"Read", "Grep", "Glob", "Edit"},
		},
		{
			name:      "subagents.tools.allow is allow-only, deny wins over it",
			subagents: config.Subagents{Tools: config.SubagentTools{Allow: []string{"Read", "Edit", "Bash"}, Deny: []string{"Bash"}}},
			want:      []string{"Read", "Edit"},
		},
		{
			name:      "subagents.tools allow narrows the definition's own list",
			front:     "tools: Read, Grep, Bash\n",
			subagents: config.Subagents{Tools: config.SubagentTools{Allow: []string{"Grep", "Edit"}}},
			want:      []string{"Grep"},
		},
		{
			name:      "subagents.tools.deny takes wildcards",
			subagents: config.Subagents{Tools: config.SubagentTools{Deny: []string{"G*"}}},
			want:      []string{"Read", "Edit", "Bash"},
		},
		{
			name:      "subagents.tools.allow takes wildcards",
			subagents: config.Subagents{Tools: config.SubagentTools{Allow: []string{"G*"}}},
			want:      []string{"Grep", "Glob"},
		},
		{
			name: "global permissions.deny removes Bash from children",
			deny: []string{"Bash"},
			want: []string{"Read", "Grep", "Glob", "Edit"},
		},
		{
			name:  "a leaf never gets Agent, even when its tools name it",
			front: "tools: Read, Agent\n",
			want:  []string{"Read"},
		},
		{
			name:      "with depth 2 a child gets Agent",
			subagents: config.Subagents{MaxSpawnDepth: 2},
			want:      []string{"Read", "Grep", "Glob", "Edit", "Bash", "Agent"},
		},
		{
			name:      "with depth 2 a child whose tools exclude Agent gets none",
			front:     "tools: Read, Grep\n",
			subagents: config.Subagents{MaxSpawnDepth: 2},
			want:      []string{"Read", "Grep"},
		},
		{
			name:      "with depth 2 a child whose tools name Task gets Agent",
			front:     "tools: Read, Task\n",
			subagents: config.Subagents{MaxSpawnDepth: 2},
			want:      []string{"Read", "Agent"},
		},
		{
			name:      "with depth 2 disallowedTools Agent removes it",
			front:     "disallowedTools: Agent\n",
			subagents: config.Subagents{MaxSpawnDepth: 2},
			want:      []string{"Read", "Grep", "Glob", "Edit", "Bash"},
		},
		{
			name:      "with depth 2 subagents.tools.deny Agent removes it",
			subagents: config.Subagents{MaxSpawnDepth: 2, Tools: config.SubagentTools{Deny: []string{"Agent"}}},
			want:      []string{"Read", "Grep", "Glob", "Edit", "Bash"},
		},
		{
			name:      "with depth 2 an Agent(x) deny for another agent keeps Agent",
			subagents: config.Subagents{MaxSpawnDepth: 2},
			deny:      []string{"Agent(other)"},
			want:      []string{"Read", "Grep", "Glob", "Edit", "Bash", "Agent"},
		},
		{
			name:      "with depth 2 the probe's own permission.task * deny removes Agent",
			front:     "permission:\n  task:\n    \"*\": deny\n",
			subagents: config.Subagents{MaxSpawnDepth: 2},
			want:      []string{"Read", "Grep", "Glob", "Edit", "Bash"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, setup{
				agents:    map[string]string{"probe": agentFile("probe", desc, tt.front, "Probe.")},
				subagents: tt.subagents, deny: tt.deny,
			})
			res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "probe", Prompt: "list your tools", SubagentType: "probe"})
			if res.IsError {
				t.Fatalf("spawn failed: %s", resultText(res))
			}
			got := poolNames(h.firstRequest("probe").req.Tools)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("child's tools (-want +got):\n%s", d)
			}
		})
	}
}

// TestGrandchildIsLeaf checks S-C1 with maxSpawnDepth 2: the child may
// spawn, and the grandchild it spawns gets no Agent tool.
func TestGrandchildIsLeaf(t *testing.T) {
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxSpawnDepth: 2},
		agents: map[string]string{
			"lead":   agentFile("lead", "Delegates", "", "Lead."),
			"worker": agentFile("worker", "Works", "", "Work."),
		},
		script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			if req.Agent == "lead" && turn(req) == 0 {
				return replyBlocks(use("toolu_gc", "Agent", AgentInput{Description: "work", Prompt: "do it", SubagentType: "worker"})), nil
			}
			return reply("done"), nil
		},
	})
	res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "lead", Prompt: "lead it", SubagentType: "lead"})
	if res.IsError {
		t.Fatalf("spawn failed: %s", resultText(res))
	}
	if got := specNames(h.firstRequest("lead").req.Tools); !slices.Contains(got, "Agent") {
		t.Errorf("child at depth 1 of 2 has tools %v, want Agent among them", got)
	}
	got := poolNames(h.firstRequest("worker").req.Tools)
	if d := cmp.Diff([]string{"Read", "Grep", "Glob", "Edit", "Bash"}, got); d != "" {
		t.Errorf("grandchild's tools (-want +got):\n%s", d)
	}
	// The grandchild's result reached the child as a successful tool result.
	leadReqs := h.requestsOf("lead")
	if len(leadReqs) != 2 {
		t.Fatalf("lead made %d model calls, want 2", len(leadReqs))
	}
	if r := lastToolResult(&leadReqs[1].req); !strings.Contains(r, "done") || !strings.Contains(r, "<task_metadata>session_id: ") {
		t.Errorf("lead's Agent result = %q, want the worker's text and trailer", r)
	}
}

// TestDepthCap checks the hard cap: maxSpawnDepth above 3 acts as 3.
func TestDepthCap(t *testing.T) {
	h := newHarness(t, setup{subagents: config.Subagents{MaxSpawnDepth: 7}})
	c := h.mainCaller()
	for depth := 0; depth < 3; depth++ {
		c.Depth = depth
		if n := spawnTools(h.svc.Tools(c)); n != 1 {
			t.Errorf("depth %d: %d spawn tools, want 1", depth, n)
		}
	}
	c.Depth = MaxDepth
	if n := spawnTools(h.svc.Tools(c)); n != 0 {
		t.Errorf("depth %d: %d spawn tools, want none past the hard cap", MaxDepth, n)
	}
}

// TestBaseToolsSliceNotWritten: the pool is built from BaseTools' slice
// plus the child's spawn tool; it must not write into spare capacity of a
// slice the runtime owns and shares between concurrent children.
func TestBaseToolsSliceNotWritten(t *testing.T) {
	h := newHarness(t, setup{subagents: config.Subagents{MaxSpawnDepth: 2}, baseCap: 8})
	res := h.mustCall(h.mainCaller(), "toolu_1", AgentInput{Description: "gp", Prompt: "go"})
	if res.IsError {
		t.Fatalf("spawn failed: %s", resultText(res))
	}
	if spare := h.base[:cap(h.base)][len(h.base)]; spare != nil {
		t.Errorf("the pool wrote %s into BaseTools' backing array", spare.Info().Name)
	}
}

// poolNames are the base and spawn tools among specs: the tools that talk
// to running agents (SendMessage, TaskOutput, …) are left to their own
// tests.
func poolNames(specs []llm.ToolSpec) []string {
	out := []string{}
	for _, n := range specNames(specs) {
		if isSpawnTool(n) || slices.Contains([]string{"Read", "Grep", "Glob", "Edit", "Bash"}, n) {
			out = append(out, n)
		}
	}
	return out
}
