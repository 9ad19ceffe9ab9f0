package notify

import (
	_ "embed"
	"time"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

var (
	//go:embed prompts/notification.md
	notificationText string

	// Parsed on first use (lazy): a process that never renders it (cadre
	// version, a run without subagents) does not pay for it at start-up.
	notificationTmpl = prompt.Lazy("notification", notificationText, prompt.FrameFuncs())
)

// endVerb says how a run ended, in its notification's summary.
var endVerb = map[task.Status]string{
	task.StatusCompleted: "completed", task.StatusFailed: "failed", task.StatusKilled: "was stopped", task.StatusTimeout: "timed out",
}

// End is how a background run ended, as its notification tells it.
type End struct {
	Status task.Status
	// Text is its result; Err why it failed, if it did.
	Text, Err string
	ToolUses  int
	Result    *runner.Result // its figures: usage, duration, cost
	// Silent says the child declined with ANNOUNCE_SKIP: its end takes
	// the notified flag, and queues nothing.
	Silent bool
	// Idle, if set, is a teammate's idle notification, which replaces the
	// run's when ok (the profile's teams).
	Idle func(status task.Status, result string) (body string, ok bool)
}

// Notification is background run t's notification: the queue entry for
// the agent that started it, and the task_notification line p publishes
// once it is queued.
func Notification(p Publisher, t runs.Info, e End) *deliver.Notice {
	result := e.Text
	if e.Err != "" {
		if result != "" {
			result += "\n\n"
		}
		result += "Error: " + e.Err
	}
	res := e.Result
	body := prompt.Render(notificationTmpl(), map[string]any{
		"ID": t.ID, "ToolUseID": t.ToolUseID, "OutputFile": t.OutputFile, "Status": e.Status,
		"Description": t.Description, "Verb": endVerb[e.Status], "Result": result,
		"Tokens": res.Usage.Total(), "ToolUses": e.ToolUses, "Duration": res.Duration.Round(time.Millisecond), "Cost": res.Cost,
	})
	if e.Idle != nil {
		if idle, ok := e.Idle(e.Status, result); ok {
			body = idle // a teammate goes idle (the claude profile's team.go)
		}
	}
	summary, isReport := endSummary(t, e.Status, e.Text)
	return &deliver.Notice{
		Entry:  queue.Entry{Priority: queue.Later, Mode: queue.ModeNotification, Target: t.ParentAgentID, TaskID: t.ID, Message: llm.UserText(body)},
		Silent: e.Silent,
		Event: func() {
			p.Publish(t.RootSessionID, event.SubtypeTaskNotification, event.Task{
				TaskID: t.ID, ToolUseID: t.ToolUseID, Status: e.Status, OutputFile: t.OutputFile,
				Summary: summary, SummaryIsReport: isReport,
				Usage: &event.TaskUsage{TotalTokens: res.Usage.Total(), ToolUses: e.ToolUses, Duration: res.Duration},
			})
		},
	}
}

// ShellNotification is a background command's notification: its status,
// exit code and the tail of its output (internal/shelltask's words); rec
// is its ended record.
func ShellNotification(p Publisher, t runs.Info, rec task.Task, tail string, took time.Duration) *deliver.Notice {
	status := rec.Status
	summary := shelltask.Summary(t.Description, rec)
	body := shelltask.Notification(t.ID, t.ToolUseID, t.OutputFile, t.Description, rec, tail)
	return &deliver.Notice{
		Entry: queue.Entry{Priority: queue.Later, Mode: queue.ModeNotification, Target: t.ParentAgentID, TaskID: t.ID, Message: llm.UserText(body)},
		Event: func() {
			p.Publish(t.RootSessionID, event.SubtypeTaskNotification, event.Task{
				TaskID: t.ID, ToolUseID: t.ToolUseID, Status: status, OutputFile: t.OutputFile,
				Summary: summary, Usage: &event.TaskUsage{Duration: took},
			})
		},
	}
}
