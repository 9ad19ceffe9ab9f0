package subagent

import (
	"cmp"
	"context"
	"errors"
	"strings"

	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
)

// The operations front ends need on a conversation's runs — OpenClaw's
// /subagents list|stop|send and /stop, Claude Code's /tasks — on top of the
// core the task tools use (tasks.go); the list itself is the group's
// (runs.Group.Runs), the stops are internal/subagent/stop's.

// Cleanup is the settings' cleanup for runs that set none: keep or delete.
func (s *Service) Cleanup() string { return cmp.Or(s.cfg.Settings.Cleanup, "keep") }

// The front ends' stops are internal/subagent/stop's; these are the calls
// it makes (stop.Runs).

// InTreeOf is InTree for a caller of the tree root.
func (s *Service) InTreeOf(ctx context.Context, root, id string) error {
	return s.InTree(ctx, Caller{RootSessionID: root}, id)
}

// LiveRuns are the runs of tree root going on in this process.
func (s *Service) LiveRuns(root string) []*runs.Live {
	var out []*runs.Live
	for _, t := range s.treeRuns(root) {
		out = append(out, t.Live)
	}
	return out
}

// Unfinished are the task records of tree root still pending or running.
func (s *Service) Unfinished(ctx context.Context, root string) ([]task.Task, error) {
	return s.cfg.Tasks.ListTasks(ctx, task.Filter{RootSessionID: root, Statuses: []task.Status{task.StatusPending, task.StatusRunning}})
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
