package cadre

import (
	"context"
	"errors"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

// SubagentCost is one subagent run's share of what a conversation spent,
// as the runtime recorded it: what a result's Subagents lists, and
// stream-json's "subagents".
type SubagentCost struct {
	AgentID     string
	AgentType   string
	Description string
	// Model is the model it ran on, as "provider:model".
	Model string
	// ParentAgentID is the agent that started it: "" for the main
	// agent's children.
	ParentAgentID string
	Turns         int
	Usage         llm.Usage
	// CostUSD is unknown when its model has no price.
	CostUSD llm.Cost
	Status  TaskStatus
}

// SubagentCosts lists the subagent runs this conversation started, at any
// depth, in start order, with what each has spent so far. Their costs and
// the main agent's own add up to the conversation's total (a run still
// going counts once its turn ends).
func (c *Conversation) SubagentCosts(ctx context.Context) ([]SubagentCost, error) {
	list, err := c.sr.subagentCosts(ctx)
	if err != nil {
		return nil, err
	}
	return convert(list, subagentCostOf), nil
}

func subagentCostOf(s event.SubagentCost) SubagentCost {
	return SubagentCost{
		AgentID: s.AgentID, AgentType: s.AgentType, Description: s.Description, Model: s.Model,
		ParentAgentID: s.ParentAgentID, Turns: s.Turns, Usage: s.Usage, CostUSD: s.CostUSD, Status: TaskStatus(s.Status),
	}
}

// sessionsGetter reads many session records in one query: the PostgreSQL
// store, where a read per run is a round trip per run (SQLite's are
// local, and stay one by one).
type sessionsGetter interface {
	GetSessions(ctx context.Context, ids []string) (map[string]session.Info, error)
}

// subagentCosts reads each run of the conversation's group from its
// session record, where its run recorded its turns, usage and cost: the
// figures the totals added up.
func (sr *sessionRun) subagentCosts(ctx context.Context) ([]event.SubagentCost, error) {
	if sr.caller.Group == nil {
		return nil, nil
	}
	runs := sr.caller.Group.Runs()
	var many map[string]session.Info // every record at once, where the store can
	if g, ok := sr.r.db.(sessionsGetter); ok && len(runs) > 1 {
		ids := make([]string, len(runs))
		for i, run := range runs {
			ids[i] = run.ID
		}
		var err error
		if many, err = g.GetSessions(ctx, ids); err != nil {
			return nil, err
		}
	}
	var out []event.SubagentCost
	for _, run := range runs {
		s := event.SubagentCost{
			AgentID: run.ID, AgentType: run.Agent, Description: run.Description, Status: string(run.Status),
		}
		if run.ParentSessionID != sr.sess.Info.ID {
			s.ParentAgentID = run.ParentSessionID
		}
		var (
			info session.Info
			err  error
		)
		if many != nil {
			var ok bool
			if info, ok = many[run.ID]; !ok {
				err = session.ErrNotFound
			}
		} else {
			info, err = sr.r.db.GetSession(ctx, run.ID)
		}
		switch {
		case errors.Is(err, session.ErrNotFound):
			// Still waiting for a place in its lane: nothing spent yet.
		case err != nil:
			return nil, err
		default:
			s.Model, s.Turns, s.Usage, s.CostUSD = info.Model, info.NumTurns, info.Usage, info.CostUSD
		}
		out = append(out, s)
	}
	return out, nil
}
