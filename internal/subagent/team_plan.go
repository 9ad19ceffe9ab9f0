package subagent

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// Plan approval (S-A6), claude profile. A teammate the lead adds with
// mode "plan" runs in plan mode — read-only, whatever its agent's mode —
// until the lead approves a plan it sent with ExitPlanMode. The approval
// is the lead's SendMessage carrying a plan_approval_response, as Claude
// Code's lead answers; the runtime, not the teammate's model, decides that
// it came from the lead and names the request outstanding, so no message
// text — a teammate's, a tool result's, a front end's — can lift plan mode.
//
// The mode is switched where every call is decided (planGate), so an
// approval reaches a run that is still going at its next call, and every
// later run of the teammate (a wake) starts out of plan mode.

var (
	//go:embed prompts/team_plan_intro.md
	teamPlanIntroText string
	//go:embed prompts/team_plan_request.md
	teamPlanRequestText string
	//go:embed prompts/exit_plan_mode.md
	exitPlanModeText string

	teamPlanRequestTmpl = lazy("team_plan_request", teamPlanRequestText, frameFuncs)
)

// maxPlanBytes bounds a plan: it is written into the lead's context.
const maxPlanBytes = 64 << 10

// planState is a plan-mode teammate's approval, shared by every run of it.
type planState struct {
	approved atomic.Bool

	mu      sync.Mutex
	pending string // the request id the lead has yet to answer, "" when none
}

// planGate decides a plan-mode teammate's calls: under plan mode until the
// lead approves, then under the teammate's own policy.
type planGate struct {
	st           *planState
	plan, normal *permission.Policy
}

func (g *planGate) current() *permission.Policy {
	if g.st.approved.Load() {
		return g.normal
	}
	return g.plan
}

func (g *planGate) PermitInput(ctx context.Context, name string, t tool.Tool, env tool.Env, input json.RawMessage) (json.RawMessage, error) {
	return g.current().PermitInput(ctx, name, t, env, input)
}

func (g *planGate) ReadFilter(name string, t tool.Tool, env tool.Env) func(path string) bool {
	return g.current().ReadFilter(name, t, env)
}

// permitOf is what decides a child's calls: its policy, behind the plan
// gate while it is a teammate that needs its plan approved.
func (s *Service) permitOf(ch *child) loop.Permitter {
	m, ok := s.teammate(ch.caller.RootSessionID, ch.caller.Teammate)
	if !ok || m.plan == nil || ch.caller.Teammate == "" {
		return &ch.policy
	}
	plan := ch.policy
	plan.Mode = permission.ModePlan
	return &planGate{st: m.plan, plan: &plan, normal: &ch.policy}
}

// ExitPlanModeInput is ExitPlanMode's input: the plan (Claude Code's
// first version of the tool; its newer one reads a plan file cadre does
// not keep). Other fields Claude Code accepts are ignored.
type ExitPlanModeInput struct {
	Plan string `json:"plan"`
}

var exitPlanModeSchema = json.RawMessage(`{"type":"object","properties":{"plan":{"type":"string","description":"The plan to carry out once the lead approves it (Markdown)"}},"required":["plan"]}`)

// exitPlanModeTool is a plan-mode teammate's way to ask the lead.
func (s *Service) exitPlanModeTool(c Caller) tool.Tool {
	return protoTool(s, tool.Info{Name: "ExitPlanMode", InputSchema: exitPlanModeSchema, Description: exitPlanModeText, Access: tool.AccessRead},
		func(ctx context.Context, _ tool.Env, in ExitPlanModeInput) (tool.Result, error) {
			return s.exitPlanMode(c, in)
		})
}

func (s *Service) exitPlanMode(c Caller, in ExitPlanModeInput) (tool.Result, error) {
	plan := strings.TrimSpace(in.Plan)
	switch {
	case plan == "":
		return tool.Errorf("plan is empty: put the whole plan in it"), nil
	case len(plan) > maxPlanBytes:
		return tool.Errorf("the plan is %d bytes; at most %d: shorten it", len(plan), maxPlanBytes), nil
	}
	tm := s.teamOf(c)
	if tm == nil {
		return tool.Errorf("you are on no team: there is no lead to approve a plan"), nil
	}
	m, ok := tm.find(c.Teammate)
	if !ok || m.plan == nil || m.plan.approved.Load() {
		return tool.Errorf("you are not in plan mode: go on with the work"), nil
	}
	id := "plan-" + ids.New()
	m.plan.mu.Lock()
	m.plan.pending = id
	m.plan.mu.Unlock()
	text := render(teamPlanRequestTmpl(), map[string]any{"From": m.name, "RequestID": id, "Plan": plan})
	s.cfg.Queue.Push(queue.Entry{Priority: queue.Later, Mode: queue.ModeMessage, Target: tm.lead.AgentID, Message: llm.UserText(text)})
	return tool.Result{
		Content: []llm.Block{llm.Text(fmt.Sprintf("Your plan was sent to the lead for approval (request %s). End your turn now and wait: the lead's answer wakes you. Until it approves you stay in plan mode.", id))},
		Meta:    map[string]any{"plan": plan, "isAgent": true, "awaitingLeaderApproval": true, "requestId": id},
	}, nil
}

// planResponse is the lead's answer to a plan, as Claude Code's lead
// sends it in a SendMessage's message.
type planResponse struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Approve   *bool  `json:"approve"`
	Feedback  string `json:"feedback"`
}

// asPlanResponse reads message as a plan_approval_response; ok is false
// for any other message, which is delivered as text.
func asPlanResponse(message string) (planResponse, bool) {
	var r planResponse
	msg := strings.TrimSpace(message)
	if !strings.HasPrefix(msg, "{") || json.Unmarshal([]byte(msg), &r) != nil || r.Type != "plan_approval_response" {
		return planResponse{}, false
	}
	return r, true
}

var errNotLead = errors.New("only the lead answers a teammate's plan")

// answerPlan applies the lead's answer to m's outstanding plan and returns
// the message that tells m.
func answerPlan(c Caller, m member, r planResponse) (string, error) {
	switch {
	case c.Teammate != "":
		return "", errNotLead
	case m.plan == nil:
		return "", fmt.Errorf("teammate %q is not in plan mode: it needs no approval", m.name)
	case r.Approve == nil:
		return "", errors.New(`a plan_approval_response needs "approve": true or false`)
	}
	m.plan.mu.Lock()
	defer m.plan.mu.Unlock()
	if r.RequestID == "" || r.RequestID != m.plan.pending {
		if m.plan.pending == "" {
			return "", fmt.Errorf("teammate %q has no plan waiting for approval (request %q)", m.name, r.RequestID)
		}
		return "", fmt.Errorf("request_id %q is not teammate %q's plan waiting for approval: answer %q", r.RequestID, m.name, m.plan.pending)
	}
	m.plan.pending = ""
	feedback := strings.TrimSpace(r.Feedback)
	if *r.Approve {
		m.plan.approved.Store(true)
		text := fmt.Sprintf("The lead approved your plan (request %s). You are out of plan mode: carry it out.", r.RequestID)
		if feedback != "" {
			text += "\nThe lead adds: " + feedback
		}
		return text, nil
	}
	return fmt.Sprintf("The lead did not approve your plan (request %s): %s\nYou are still in plan mode. Revise the plan, then call ExitPlanMode again.", r.RequestID, feedback), nil
}
