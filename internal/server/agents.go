package server

import (
	"net/http"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// agentJSON is one agent of a run's tree as the web view's agents tree,
// timeline and detail panel show it: the main agent first, then every
// subagent run at any depth, in start order.
type agentJSON struct {
	ID string `json:"id"`
	// Index is the run's number in /subagents (#N); 0 for the main agent.
	Index     int    `json:"index"`
	ParentID  string `json:"parent_id,omitempty"` // the agent that started it; "" for the main agent
	ToolUseID string `json:"tool_use_id,omitempty"`
	Agent     string `json:"agent"`
	// Name is a named run's SendMessage name (a teammate's), if any.
	Name string `json:"name,omitempty"`
	// Description is the Agent call's; the main agent has none.
	Description string `json:"description,omitempty"`
	Prompt      string `json:"prompt,omitempty"`
	Depth       int    `json:"depth"`
	Background  bool   `json:"background"`
	// State is queued (waiting for a place in the subagent lane),
	// running, idle (the main agent between turns), or how it ended:
	// completed, failed, killed, timeout.
	State   string     `json:"state"`
	Started time.Time  `json:"started"`
	Ended   *time.Time `json:"ended,omitempty"`
	// LastActive is, for the main agent, when its newest turn ended.
	LastActive *time.Time `json:"last_active,omitempty"`
	// Model is "provider:model" for a subagent (from its session record),
	// the init event's model for the main agent; "" until known.
	Model string `json:"model,omitempty"`
	// Tools is the agent's pool: the main agent's as its init event gives
	// it; a subagent's definition's allowlist, null meaning every tool
	// available, less DisallowedTools.
	Tools           []string `json:"tools"`
	DisallowedTools []string `json:"disallowed_tools,omitempty"`
	// NumTurns, Tokens and CostUSD are the agent's own (its session
	// record's turns and cost change when a run's turn ends; tokens grow
	// reply by reply). SubtreeCostUSD adds its descendants'. A null cost
	// is unknown (a model with no price).
	NumTurns       int      `json:"num_turns"`
	Tokens         int64    `json:"tokens"`
	ToolUses       int      `json:"tool_uses"`
	CostUSD        llm.Cost `json:"cost_usd"`
	SubtreeCostUSD llm.Cost `json:"subtree_cost_usd"`
	// Tool is the call it waits on now, if any; Calls its tool calls in
	// order (what the timeline marks).
	Tool     string     `json:"tool,omitempty"`
	Calls    []callJSON `json:"calls"`
	Children []string   `json:"children"`
	Summary  string     `json:"summary,omitempty"`
}

// subagentState is a subagent run's state as the web view names it: a run
// waiting for a place in the lane (pending) is queued.
func subagentState(sa cadre.SubagentRun) string {
	if sa.Status == cadre.TaskPending {
		return "queued"
	}
	return string(sa.Status)
}

// getAgents is GET /api/runs/{id}/agents: the run's agents tree with each
// agent's state and figures, and cost rolled up per subtree.
func (s *Server) getAgents(w http.ResponseWriter, r *http.Request, rn *run) {
	subs, err := rn.conv.Subagents(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	costs, err := rn.conv.SubagentCosts(r.Context())
	if err != nil {
		fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rn.agents(subs, costs, s.rt.Agent))
}

// agents builds the tree from the runtime's lists (Subagents for states,
// SubagentCosts for turns, model and cost) and the run's own events
// (calls, the main agent's figures, prompts). def finds a definition.
func (r *run) agents(subs []cadre.SubagentRun, costs []cadre.SubagentCost, def func(string) (cadre.Agent, bool)) []agentJSON {
	byCost := map[string]cadre.SubagentCost{}
	for _, c := range costs {
		byCost[c.AgentID] = c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	acts := map[string]cadre.ActivityRun{}
	for _, a := range r.activity.Runs() {
		acts[a.ToolUseID] = a
	}
	main := agentJSON{
		ID: r.id, Agent: "main", Prompt: r.main.prompt, State: r.stateLocked(), Started: r.started, Model: r.main.model,
		Tools: nonNil(r.main.tools), NumTurns: r.main.turns, Tokens: r.main.tokens, ToolUses: len(r.activity.MainCalls()),
		CostUSD: r.ownCostLocked(), Calls: callsOf(r.activity.MainCalls()), Children: []string{},
	}
	if !r.ended.IsZero() {
		t := r.ended
		main.Ended = &t
	}
	if !r.main.answered.IsZero() {
		t := r.main.answered
		main.LastActive = &t
	}
	out := []agentJSON{main}
	at := map[string]int{r.id: 0}
	for _, sa := range subs {
		a := agentJSON{
			ID: sa.ID, Index: sa.Index, ParentID: sa.ParentSessionID, ToolUseID: sa.ToolUseID, Agent: sa.Agent, Name: sa.Name,
			Description: sa.Description, Prompt: r.prompts[sa.ID], Depth: sa.Depth, Background: sa.Background,
			State: subagentState(sa), Started: sa.Started, Tokens: sa.Tokens, ToolUses: sa.ToolUses, Tool: sa.CurrentTool,
			Calls: []callJSON{}, Children: []string{}, Summary: sa.Result,
		}
		if !sa.Ended.IsZero() {
			t := sa.Ended
			a.Ended = &t
		}
		if c, ok := byCost[sa.ID]; ok {
			a.Model, a.NumTurns, a.CostUSD = c.Model, c.Turns, c.CostUSD
			a.Tokens = max(a.Tokens, c.Usage.Total())
		}
		if act, ok := acts[sa.ToolUseID]; ok && sa.ToolUseID != "" {
			a.Calls = callsOf(act.Calls)
			a.Tokens = max(a.Tokens, act.Tokens)
			if a.Summary == "" {
				a.Summary = act.Summary
			}
		}
		if d, ok := def(sa.Agent); ok {
			a.Tools, a.DisallowedTools = d.Tools, d.DisallowedTools
		}
		at[a.ID] = len(out)
		out = append(out, a)
	}
	for i := 1; i < len(out); i++ {
		p, ok := at[out[i].ParentID]
		if !ok {
			p = 0 // a parent not in the list: shown under the main agent
		}
		out[p].Children = append(out[p].Children, out[i].ID)
	}
	// Subtree costs, leaves first: a child starts after its parent, so
	// walking the list backwards meets every child before its parent.
	for i := range out {
		out[i].SubtreeCostUSD = out[i].CostUSD
	}
	for i := len(out) - 1; i >= 0; i-- {
		for _, c := range out[i].Children {
			out[i].SubtreeCostUSD = out[i].SubtreeCostUSD.Add(out[at[c]].SubtreeCostUSD)
		}
	}
	return out
}
