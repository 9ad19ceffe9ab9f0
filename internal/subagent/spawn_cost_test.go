package subagent

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
)

// Children of one definition in one workspace get one system prompt,
// rendered once: the ten children of a message do not each execute the
// template and look for .git. A new day, workspace or definition renders
// again.
func TestChildSystemPromptRenderedOnce(t *testing.T) {
	var now atomic.Pointer[time.Time]
	now.Store(&fixedNow)
	h := newHarness(t, setup{now: func() time.Time { return *now.Load() }})
	for _, id := range []string{"toolu_1", "toolu_2"} {
		h.mustCall(h.mainCaller(), id, AgentInput{Description: "look", Prompt: "Look around."})
	}
	reqs := h.requestsOf("general-purpose")
	if len(reqs) != 2 {
		t.Fatalf("%d general-purpose requests, want 2", len(reqs))
	}
	first := reqs[0].req.System
	if !strings.Contains(first, "Working directory: "+h.dir) || !strings.Contains(first, "Today's date: 2025-06-01") {
		t.Errorf("the child's system prompt lacks its environment:\n%s", first)
	}
	if reqs[1].req.System != first {
		t.Errorf("two children of one definition got different system prompts:\n%s\n---\n%s", first, reqs[1].req.System)
	}

	def, ch := agent.GeneralPurpose(), &child{cwd: h.dir}
	h.svc.systemPrompt(def, ch)
	// The date and the lookup's key are all a cached prompt costs.
	if allocs := testing.AllocsPerRun(20, func() { h.svc.systemPrompt(def, ch) }); allocs > 2 {
		t.Errorf("a cached system prompt costs %v allocations: it is rendered per child", allocs)
	}

	next := fixedNow.Add(24 * time.Hour)
	now.Store(&next)
	if got := h.svc.systemPrompt(def, ch); !strings.Contains(got, "Today's date: 2025-06-02") {
		t.Errorf("a child started the next day has the old date:\n%s", got)
	}
	other := &child{cwd: t.TempDir()}
	if got := h.svc.systemPrompt(def, other); !strings.Contains(got, "Working directory: "+other.cwd) {
		t.Errorf("a child in another directory has the first one's prompt:\n%s", got)
	}
}
