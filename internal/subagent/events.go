package subagent

import (
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/task"
)

// The task_* system events: a background run's start, progress and end on
// the bus, typed (event.Task); package output shapes their stream-json
// lines.

// taskStarted announces a run that starts in, or moves to, the background.
func (s *Service) taskStarted(t *liveTask) {
	s.started(t, true)
}

// started announces a run: a foreground one too, as Claude Code announces
// every subagent run (is_backgrounded false); a foreground run moved to
// the background is announced again, backgrounded.
func (s *Service) started(t *liveTask, background bool) {
	e := event.Task{
		TaskID: t.ID, ToolUseID: t.ToolUseID, Description: t.Description, SubagentType: t.AgentType,
		Backgrounded: background, SpawnDepth: t.Depth, TaskType: string(t.TaskKind()), Prompt: t.Prompt,
	}
	if t.Kind == task.KindLocalBash {
		// As Claude Code announces a shell: no agent type, prompt or
		// spawn depth.
		e.SubagentType, e.Prompt, e.SpawnDepth = "", "", 0
	}
	s.publishTask(t.RootSessionID, event.SubtypeTaskStarted, e)
}

// foregroundEnded reports the end of a run that stayed in the foreground,
// as Claude Code does for every subagent run: a task_notification with no
// output file (a foreground run keeps its log in memory) and its figures.
// Its result went to its caller as the Agent call's result, not through
// the queue.
func (s *Service) foregroundEnded(t *liveTask, status task.Status, report string, toolUses int, res *runner.Result) {
	summary, isReport := endSummary(t, status, report)
	s.publishTask(t.RootSessionID, event.SubtypeTaskNotification, event.Task{
		TaskID: t.ID, ToolUseID: t.ToolUseID, Status: string(status), Summary: summary, SummaryIsReport: isReport,
		Usage: event.TaskUsage{TotalTokens: res.Usage.Total(), ToolUses: toolUses, Duration: res.Duration},
	})
}

// endSummary is a task_notification's summary: the agent's report when it
// completed with one, as Claude Code puts it there (a program shows the
// answer without reading the output file), else how the run ended.
func endSummary(t *liveTask, status task.Status, report string) (summary string, isReport bool) {
	if status == task.StatusCompleted && strings.TrimSpace(report) != "" {
		return report, true
	}
	return fmt.Sprintf("Agent %q %s", t.Description, endVerb[status]), false
}

// progress reports a background run's figures so far.
func (s *Service) progress(t *liveTask) {
	_, tokens, toolUses, last := t.Snapshot()
	s.publishTask(t.RootSessionID, event.SubtypeTaskProgress, event.Task{
		TaskID: t.ID, ToolUseID: t.ToolUseID, Description: t.Description, SubagentType: t.AgentType,
		Usage: event.TaskUsage{TotalTokens: tokens, ToolUses: toolUses, Duration: s.cfg.Now().Sub(t.Started())}, LastToolName: last,
	})
}

func (s *Service) publishTask(rootSessionID, subtype string, payload event.Task) {
	if s.cfg.Bus == nil {
		return
	}
	s.cfg.Bus.Publish(event.Event{Type: event.TypeSystem, Subtype: subtype, SessionID: rootSessionID, Time: s.cfg.Now(), UUID: ids.New(), Task: &payload})
}
