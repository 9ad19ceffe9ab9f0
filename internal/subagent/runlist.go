package subagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/task"
)

// The operations front ends need on a conversation's runs — OpenClaw's
// /subagents list|stop|send and /stop, Claude Code's /tasks — on top of the
// core the task tools use (tasks.go).

// Run is what a front end shows of one run of a group: fixed facts from
// its launch and live figures, read at one moment.
type Run struct {
	ID              string // agent id = task id = child session id
	ParentSessionID string // the session whose agent started it
	ToolUseID       string // the spawn call that started it
	Agent           string // its type
	Name            string // its SendMessage name, "" if none
	Description     string
	Prompt          string
	Depth           int // 1 for a child of the main agent
	Background      bool
	// Cleanup is the run's own cleanup setting, "" when it takes the
	// settings' (Service.Cleanup).
	Cleanup string

	Started time.Time
	// Ended is zero while the run goes on; Status is then running.
	Ended  time.Time
	Status task.Status

	Tokens   int64
	ToolUses int
	LastTool string // the tool it called last
	// Result is its newest text (the final one once ended); Err why it
	// failed, if it did.
	Result, Err string
}

// run snapshots t.
func (t *liveTask) run() Run {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := Run{
		ID: t.id, ParentSessionID: t.parentSessionID, ToolUseID: t.toolUseID, Agent: t.agentType, Name: t.name,
		Description: t.description, Prompt: t.prompt, Depth: t.depth, Background: t.phase.background(), Cleanup: t.cleanup,
		Started: t.started, Ended: t.endedAt, Status: task.StatusRunning,
		Tokens: t.tokens, ToolUses: t.toolUses, LastTool: t.lastTool, Result: t.text,
	}
	if !t.phase.ended() && t.waiting {
		r.Status = task.StatusPending
	}
	if t.phase.ended() {
		r.Status = t.status
		if text := strings.TrimSpace(t.final.Result); text != "" {
			r.Result = text
		}
		if t.final.Err != nil {
			r.Err = t.final.Err.Error()
		}
	}
	return r
}

// groupRun is a run of a group: the run while it goes on, its snapshot
// once it has ended.
type groupRun struct {
	live  *liveTask
	ended Run
	// logged is 1 + the place of the run's newest entry in the group's
	// log of changes, 0 before it has one.
	logged int
}

// Runs lists every run the group started, at any depth, in launch order,
// which a later launch or an end never changes: front ends number runs
// by it. An agent continued under its id keeps its first place and shows
// its newest run.
func (g *Group) Runs() []Run {
	g.mu.Lock()
	all := append([]groupRun(nil), g.all...)
	g.mu.Unlock()
	var out []Run
	at := map[string]int{}
	for _, gr := range all {
		r := gr.ended
		if gr.live != nil {
			r = gr.live.run()
		}
		if i, ok := at[r.ID]; ok {
			out[i] = r
			continue
		}
		at[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}

// RunsChanged lists, in launch order, the runs that changed since mark —
// launched, started, spent or ended — where mark is a place in the
// group's log of changes (0 for all). ends holds, for each run listed that
// has ended, the place of its end in the log, -1 for a run going on: a
// caller that wants to see an ended run again passes that as the next
// mark. next is the mark of this moment. The cost is what changed since
// mark: 10,000 runs waiting in the lane are not visited for each result.
func (g *Group) RunsChanged(mark int) (runs []Run, ends []int, next int) {
	type change struct{ at, logged int }
	g.mu.Lock()
	mark = min(max(mark, 0), len(g.changes))
	var changes []change
	for k, i := range g.changes[mark:] {
		if i >= 0 {
			changes = append(changes, change{i, mark + k})
		}
	}
	slices.SortFunc(changes, func(a, b change) int { return cmp.Compare(a.at, b.at) })
	all := make([]groupRun, len(changes))
	ends = make([]int, len(changes))
	for k, c := range changes {
		all[k] = g.all[c.at]
		ends[k] = -1
		if all[k].live == nil {
			ends[k] = c.logged
		}
	}
	next = len(g.changes)
	g.mu.Unlock()
	runs = make([]Run, len(all))
	for k, gr := range all {
		runs[k] = gr.ended
		if gr.live != nil {
			runs[k] = gr.live.run()
		}
	}
	return runs, ends, next
}

// Cleanup is the settings' cleanup for runs that set none: keep or delete.
func (s *Service) Cleanup() string { return cmp.Or(s.cfg.Settings.Cleanup, "keep") }

// StopTree stops run id of the tree rootSessionID and every run it
// started, transitively (OpenClaw's stop cascades to descendants): a
// background grandchild outlives its parent's run otherwise, since runs
// live as long as their group. It returns the ids it stopped, id first,
// once they have ended. A run in another process is asked to stop
// through its record (Stop).
func (s *Service) StopTree(ctx context.Context, rootSessionID, id string) ([]string, error) {
	if err := task.ValidateID(id); err != nil {
		return nil, fmt.Errorf("invalid subagent id: %w", err)
	}
	if err := s.InTree(ctx, Caller{RootSessionID: rootSessionID}, id); err != nil {
		return nil, err
	}
	runs := s.treeRuns(rootSessionID)
	children := map[string][]*liveTask{}
	var self *liveTask
	for _, t := range runs {
		children[t.parentSessionID] = append(children[t.parentSessionID], t)
		if t.id == id {
			self = t
		}
	}
	var stop []*liveTask
	var walk func(string)
	walk = func(parent string) {
		for _, t := range children[parent] {
			stop = append(stop, t)
			walk(t.id)
		}
	}
	walk(id)
	stopped := []string{}
	if self == nil {
		// Not running here: in another process, or not running at all.
		if _, err := s.Stop(ctx, id); err != nil {
			if len(stop) == 0 {
				return nil, err
			}
		} else {
			stopped = append(stopped, id)
		}
	} else {
		stop = append([]*liveTask{self}, stop...)
	}
	for _, t := range stop {
		t.cancel(errStopped)
	}
	for _, t := range stop {
		select {
		case <-t.done:
		case <-ctx.Done():
			return stopped, context.Cause(ctx)
		}
		stopped = append(stopped, t.id)
	}
	return stopped, nil
}

// StopAll stops every run of the tree rootSessionID in progress in this
// process (OpenClaw's /stop and "/subagents stop all"), and asks the
// process running any other unfinished task of the tree to stop it. It
// returns the ids it stopped once they have ended.
func (s *Service) StopAll(ctx context.Context, rootSessionID string) ([]string, error) {
	runs := s.treeRuns(rootSessionID)
	here := map[string]bool{}
	for _, t := range runs {
		here[t.id] = true
		t.cancel(errStopped)
	}
	stopped := []string{}
	var errs []error
	recs, err := s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: rootSessionID, Statuses: []task.Status{task.StatusPending, task.StatusRunning}})
	if err != nil {
		errs = append(errs, err)
	}
	for _, rec := range recs {
		if here[rec.ID] {
			continue
		}
		if _, err := s.Stop(ctx, rec.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		stopped = append(stopped, rec.ID)
	}
	for _, t := range runs {
		select {
		case <-t.done:
		case <-ctx.Done():
			return stopped, context.Cause(ctx)
		}
		stopped = append(stopped, t.id)
	}
	return stopped, errors.Join(errs...)
}

// SendMessage gives a message to agent to (its name or id) of c's tree,
// as the SendMessage tool does: queued when it is running (it reads it
// after its current step), else it is resumed in the background with it.
// The reply says which.
func (s *Service) SendMessage(ctx context.Context, c Caller, to, message string) (string, error) {
	if c.Group == nil {
		c.Group = s.orphans // as the tools do: a resumed agent needs a group
	}
	summary := strings.Join(strings.Fields(message), " ")
	summary = clip(summary, 60)
	res, err := s.Message(ctx, c, "send_"+ids.New(), to, message, summary)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	text := strings.TrimSpace(b.String())
	if res.IsError {
		return "", errors.New(text)
	}
	return text, nil
}
