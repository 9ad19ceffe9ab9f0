package subagent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/task"
)

// The operations front ends need on a conversation's runs — OpenClaw's
// /subagents list|stop|send and /stop, Claude Code's /tasks — on top of the
// core the task tools use (tasks.go).

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
		children[t.ParentSessionID] = append(children[t.ParentSessionID], t)
		if t.ID == id {
			self = t
		}
	}
	var stop []*liveTask
	var walk func(string)
	walk = func(parent string) {
		for _, t := range children[parent] {
			stop = append(stop, t)
			walk(t.ID)
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
		t.Cancel(errStopped)
	}
	for _, t := range stop {
		select {
		case <-t.Done():
		case <-ctx.Done():
			return stopped, context.Cause(ctx)
		}
		stopped = append(stopped, t.ID)
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
		here[t.ID] = true
		t.Cancel(errStopped)
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
		case <-t.Done():
		case <-ctx.Done():
			return stopped, context.Cause(ctx)
		}
		stopped = append(stopped, t.ID)
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
