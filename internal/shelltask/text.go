package shelltask

import (
	"bytes"
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"text/template"

	"github.com/cadre-dev/cadre/internal/frame"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/tmplexec"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// What a background shell says to the model: its launch text, its
// notification and its TaskOutput answer. Its output is the command's,
// model-facing as data: escaped and framed (internal/frame).

var (
	//go:embed launched.md
	launchedText string
	//go:embed notification.md
	notificationText string

	frameFuncs = template.FuncMap{"escape": frame.Escape, "untrusted": frame.Untrusted}
	// Parsed on first use; they run on tmplexec (see its doc.go).
	launchedTmpl     = lazy("shell_launched", launchedText, nil)
	notificationTmpl = lazy("shell_notification", notificationText, frameFuncs)
)

func lazy(name, text string, funcs template.FuncMap) func() *tmplexec.Template {
	return sync.OnceValue(func() *tmplexec.Template {
		return tmplexec.New(template.Must(template.New(name).Funcs(funcs).Parse(text)), funcs)
	})
}

func render(t *tmplexec.Template, data any) string {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		// The templates are ours and their data is fixed in shape: a
		// failure is a bug to surface loudly in tests.
		panic("shelltask: template " + t.Name() + ": " + err.Error())
	}
	return strings.TrimSpace(b.String())
}

// Launched is the Bash call's result for a command started in the
// background as task id: where its output goes, that its end will be told,
// and the calls (in the caller's profile's words) that read and stop it.
func Launched(id, outputFile, readCall, stopCall string) string {
	return render(launchedTmpl(), map[string]string{"ID": id, "OutputFile": outputFile, "Output": readCall, "Stop": stopCall})
}

// Notification is the <task-notification> of command id, started by call
// toolUseID as description with its output in outputFile, that ended as
// end (its status and error) says: its status, a sentence (Summary), its
// exit code once it exited and the tail of its output, escaped.
func Notification(id, toolUseID, outputFile, description string, end task.Task, tail string) string {
	rec := end
	code, exited := ExitCode(rec)
	return render(notificationTmpl(), map[string]any{
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
		fmt.Fprintf(&b, "<error>%s</error>\n", frame.Escape(rec.Error))
	}
	if filter != nil {
		fmt.Fprintf(&b, "<filter>%s</filter>\n", frame.Escape(filter.String()))
	}
	fmt.Fprintf(&b, "<note>%s</note>\n<output>\n%s\n</output>", frame.Untrusted(), frame.Escape(strings.TrimRight(out, "\n")))
	return tool.Result{Content: []llm.Block{llm.Text(b.String())}, Meta: meta}
}
