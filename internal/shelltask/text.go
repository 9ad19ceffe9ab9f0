package shelltask

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// What a background shell says to the model: its launch text, its
// notification and its TaskOutput answer. Its output is the command's,
// model-facing as data: escaped and framed (internal/subagent/prompt).

var (
	//go:embed launched.md
	launchedText string
	//go:embed notification.md
	notificationText string

	// Parsed on first use; they run on tmplexec (see its doc.go).
	launchedTmpl     = prompt.Lazy("shell_launched", launchedText, nil)
	notificationTmpl = prompt.Lazy("shell_notification", notificationText, prompt.FrameFuncs())
)

// Launched is the Bash call's result for a command started in the
// background as task id: where its output goes, that its end will be told,
// and the calls (in the caller's profile's words) that read and stop it.
func Launched(id, outputFile, readCall, stopCall string) string {
	return prompt.Render(launchedTmpl(), map[string]string{"ID": id, "OutputFile": outputFile, "Output": readCall, "Stop": stopCall})
}

// Notification is the <task-notification> of command id, started by call
// toolUseID as description with its output in outputFile, that ended as
// end (its status and error) says: its status, a sentence (Summary), its
// exit code once it exited and the tail of its output, escaped.
func Notification(id, toolUseID, outputFile, description string, end task.Task, tail string) string {
	rec := end
	code, exited := ExitCode(rec)
	return prompt.Render(notificationTmpl(), map[string]any{
		"ID": id, "ToolUseID": toolUseID, "OutputFile": outputFile, "Status": rec.Status,
		"Summary": Summary(description, rec), "Exited": exited, "ExitCode": code, "Tail": tail,
	})
}

// OutputResult is TaskOutput's answer for a background command: its
// status, its exit code once it exited, and its output (the lines filter
// matches, if set), the newest part when it is long. retrieval is the
// answer's retrieval_status.
func OutputResult(rec task.Task, filter *regexp.Regexp, retrieval string) tool.Result {
	out, err := Text(rec.OutputFile, ReadLimit, filter)
	if err != nil {
		return tool.Errorf("cannot read the output of %s: %v", rec.ID, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<task_id>%s</task_id>\n<task_type>%s</task_type>\n<status>%s</status>\n", rec.ID, rec.Kind, rec.Status)
	meta := map[string]any{"task_id": rec.ID, "task_type": string(rec.Kind), "status": string(rec.Status), "retrieval_status": retrieval}
	if code, ok := ExitCode(rec); ok {
		fmt.Fprintf(&b, "<exit_code>%d</exit_code>\n", code)
		meta["exit_code"] = code
	} else if rec.Status.Terminal() && rec.Error != "" {
		fmt.Fprintf(&b, "<error>%s</error>\n", prompt.Escape(rec.Error))
	}
	if filter != nil {
		fmt.Fprintf(&b, "<filter>%s</filter>\n", prompt.Escape(filter.String()))
	}
	fmt.Fprintf(&b, "<note>%s</note>\n<output>\n%s\n</output>", prompt.Untrusted, prompt.Escape(strings.TrimRight(out, "\n")))
	return tool.Result{Content: []llm.Block{llm.Text(b.String())}, Meta: meta}
}
