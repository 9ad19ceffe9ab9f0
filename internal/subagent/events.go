package subagent

import (
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/task"
)

// The task_* system events: a background run's start, progress and end on
// the bus, typed (event.Task); package output shapes their stream-json
// lines.

// taskStarted announces a run that starts in, or moves to, the background.
func (s *Service) taskStarted(t *liveTask) {
	s.publishTask(t.rootSessionID, event.SubtypeTaskStarted, event.Task{
		TaskID: t.id, ToolUseID: t.toolUseID, Description: t.description, SubagentType: t.agentType,
		Backgrounded: true, SpawnDepth: t.depth, TaskType: string(task.KindLocalAgent), Prompt: t.prompt,
	})
}

// progress reports a background run's figures so far.
func (s *Service) progress(t *liveTask) {
	_, tokens, toolUses, last := t.snapshot()
	s.publishTask(t.rootSessionID, event.SubtypeTaskProgress, event.Task{
		TaskID: t.id, ToolUseID: t.toolUseID, Description: t.description, SubagentType: t.agentType,
		Usage: event.TaskUsage{TotalTokens: tokens, ToolUses: toolUses, Duration: s.cfg.Now().Sub(t.started)}, LastToolName: last,
	})
}

func (s *Service) publishTask(rootSessionID, subtype string, payload event.Task) {
	if s.cfg.Bus == nil {
		return
	}
	s.cfg.Bus.Publish(event.Event{Type: event.TypeSystem, Subtype: subtype, SessionID: rootSessionID, Time: s.cfg.Now(), UUID: ids.New(), Task: &payload})
}
