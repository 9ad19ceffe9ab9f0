package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
)

// Publisher publishes the task_* system events of the runs of one
// service.
type Publisher struct {
	Bus *event.Bus // nil: nothing is published
	Now func() time.Time
}

// Started announces a run that starts, or moves to, the background; and a
// foreground one too (background false), as Claude Code announces every
// subagent run (is_backgrounded false); a foreground run moved to the
// background is announced again, backgrounded.
func (p Publisher) Started(t runs.Info, background bool) {
	e := event.Task{
		TaskID: t.ID, ToolUseID: t.ToolUseID, Description: t.Description, AgentType: t.AgentType,
		Background: background, SpawnDepth: t.Depth, Kind: t.TaskKind(), Prompt: t.Prompt,
	}
	if t.Kind == task.KindLocalBash {
		// As Claude Code announces a shell: no agent type, prompt or
		// spawn depth.
		e.AgentType, e.Prompt, e.SpawnDepth = "", "", 0
	}
	p.Publish(t.RootSessionID, event.SubtypeTaskStarted, e)
}

// ForegroundEnded reports the end of a run that stayed in the foreground,
// as Claude Code does for every subagent run: a task_notification with no
// output file (a foreground run keeps its log in memory) and its figures.
// Its result went to its caller as the Agent call's result, not through
// the queue.
func (p Publisher) ForegroundEnded(t runs.Info, status task.Status, report string, toolUses int, res *runner.Result) {
	summary, isReport := endSummary(t, status, report)
	p.Publish(t.RootSessionID, event.SubtypeTaskNotification, event.Task{
		TaskID: t.ID, ToolUseID: t.ToolUseID, Status: status, Summary: summary, SummaryIsReport: isReport,
		Usage: &event.TaskUsage{TotalTokens: res.Usage.Total(), ToolUses: toolUses, Duration: res.Duration},
	})
}

// endSummary is a task_notification's summary: the agent's report when it
// completed with one, as Claude Code puts it there (a program shows the
// answer without reading the output file), else how the run ended.
func endSummary(t runs.Info, status task.Status, report string) (summary string, isReport bool) {
	if status == task.StatusCompleted && strings.TrimSpace(report) != "" {
		return report, true
	}
	return fmt.Sprintf("Agent %q %s", t.Description, endVerb[status]), false
}

// Progress reports a background run's figures so far.
func (p Publisher) Progress(t *runs.Live) {
	_, tokens, toolUses, last := t.Snapshot()
	p.Publish(t.RootSessionID, event.SubtypeTaskProgress, event.Task{
		TaskID: t.ID, ToolUseID: t.ToolUseID, Description: t.Description, AgentType: t.AgentType,
		Usage: &event.TaskUsage{TotalTokens: tokens, ToolUses: toolUses, Duration: p.Now().Sub(t.Started())}, LastToolName: last,
	})
}

// Publish publishes one task_* event of the tree rootSessionID.
func (p Publisher) Publish(rootSessionID, subtype string, payload event.Task) {
	if p.Bus == nil {
		return
	}
	p.Bus.Publish(event.Event{Type: event.TypeSystem, Subtype: subtype, SessionID: rootSessionID, Time: p.Now(), UUID: ids.New(), Task: &payload})
}
