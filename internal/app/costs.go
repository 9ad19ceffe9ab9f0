package app

import (
	"context"
	"errors"
	"sync"
	"unique"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/record"
)

// sessionsGetter reads many session records in one query: the PostgreSQL
// store, where a read per run is a round trip per run (SQLite's are
// local, and stay one by one).
type sessionsGetter interface {
	GetSessions(ctx context.Context, ids []string) (map[string]session.Info, error)
}

// SubagentCosts reads each run of the conversation's group from its
// session record, where its run recorded its turns, usage and cost: the
// figures the totals added up. A run whose end this process wrote carries
// the record as written (Run.Recorded), and is not read. Every result
// lists them, and a run of 10,000 children writes hundreds of results, so
// a record is read again only when it can say something new (Costs).
// sinceLast keeps only the runs whose entry changed since the previous
// call that asked so: what a result lists.
func (a *App) SubagentCosts(ctx context.Context, costs *Costs, group *subagent.Group, sessionID string, sinceLast bool) ([]event.SubagentCost, error) {
	if group == nil {
		return nil, nil
	}
	costs.mu.Lock()
	defer costs.mu.Unlock()
	if costs.seen == nil {
		costs.seen = map[string]*costSeen{}
	}
	var (
		runs []subagent.Run
		ends []int // for each run, where its end is in the group's log
		next int   // the mark of the next call
	)
	if sinceLast {
		runs, ends, next = group.RunsChanged(costs.mark)
	} else {
		runs = group.Runs()
	}
	infos, err := a.readRecords(ctx, costs, runs)
	if err != nil {
		return nil, err
	}
	var out []event.SubagentCost
	for k, run := range runs {
		s := event.SubagentCost{
			AgentID: run.ID, AgentType: run.Agent, Description: run.Description, Status: run.Status,
		}
		if run.ParentSessionID != sessionID {
			s.ParentAgentID = run.ParentSessionID
		}
		seen := costs.seen[run.ID]
		info, read := infos[run.ID]
		if r := run.Recorded; r != nil {
			info, read = session.Info{Model: r.Model, NumTurns: r.Turns, Usage: r.Usage, CostUSD: r.Cost, Status: r.Status}, true
		}
		if read {
			if seen == nil {
				seen = &costSeen{}
				costs.seen[run.ID] = seen
			}
			// One copy of a model's name for all the runs on it.
			model := unique.Make(info.Model).Value()
			if seen.model != model || seen.turns != info.NumTurns || seen.usage != info.Usage || seen.cost != info.CostUSD {
				seen.model, seen.turns, seen.usage, seen.cost = model, info.NumTurns, info.Usage, info.CostUSD
				seen.reported = false
			}
			seen.tokens, seen.final = run.Tokens, !run.Ended.IsZero() && info.Status.Ended()
		}
		if seen != nil {
			s.Model, s.Turns, s.Usage, s.CostUSD = seen.model, seen.turns, seen.usage, seen.cost
		}
		if !sinceLast {
			out = append(out, s)
			continue
		}
		if ends[k] >= 0 && ends[k] < next && (seen == nil || !seen.final) {
			next = ends[k]
		}
		if seen == nil {
			// Nothing read of it yet: listed with its figures at nought
			// once, as before any record.
			seen = &costSeen{}
			costs.seen[run.ID] = seen
		}
		if seen.reported && seen.status == s.Status && seen.parent == s.ParentAgentID {
			continue // its figures are seen's, and nothing else moved
		}
		seen.reported, seen.status, seen.parent = true, s.Status, s.ParentAgentID
		out = append(out, s)
	}
	if sinceLast {
		// An ended run whose record did not say so yet is read again next
		// time: the mark stays at the first of them.
		costs.mark = next
	}
	return out, nil
}

// readRecords reads the session records of the runs whose figures may
// have moved since Costs last saw them, in one query where the store
// can. A run without a record yet (waiting for a place in its lane) is
// left out.
func (a *App) readRecords(ctx context.Context, costs *Costs, runs []subagent.Run) (map[string]session.Info, error) {
	var ids []string
	for _, run := range runs {
		ended := !run.Ended.IsZero()
		seen, ok := costs.seen[run.ID]
		switch {
		case run.Recorded != nil:
			// This process wrote its end: the run says what the record does.
		case ok && (seen.final || !ended && seen.tokens == run.Tokens):
			// Ended and recorded as ended, or nothing spent since.
		case !ok && !ended && run.Tokens == 0:
			// Nothing spent yet, perhaps no record at all.
		default:
			ids = append(ids, run.ID)
		}
	}
	if g, ok := a.DB.(sessionsGetter); ok && len(ids) > 1 {
		return g.GetSessions(ctx, ids)
	}
	infos := make(map[string]session.Info, len(ids))
	for _, id := range ids {
		info, err := a.DB.GetSession(ctx, id)
		switch {
		case errors.Is(err, session.ErrNotFound):
		case err != nil:
			return nil, err
		default:
			infos[id] = info
		}
	}
	return infos, nil
}

// Costs is what SubagentCosts last read of each run of a conversation's
// tree (the conversation keeps one): a run that ended and whose record
// says so spends nothing more, and one whose token count has not moved
// has recorded no turn since.
type Costs struct {
	mu   sync.Mutex
	seen map[string]*costSeen
	// mark is the place in the group's log of changes the results last read
	// (Group.RunsChanged).
	mark int
}

// costSeen is one run's figures as its record last gave them, and what of
// its entry the results last listed. An entry is built from the run (its
// id, type and description, which do not change, its status and parent)
// and these figures, so the status and parent listed, and that the
// figures were listed since they were last read, say whether it moved:
// a run of 10,000 children keeps one of these a run, not two entries.
type costSeen struct {
	model  string
	turns  int
	usage  llm.Usage
	cost   llm.Cost
	tokens int64 // the run's token count when read
	final  bool

	reported bool // listed since the figures last changed
	status   record.TaskStatus
	parent   string
}
