package shell

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/subagent/deliver"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/tool"
)

// Filter compiles BashOutput's filter ("" for none).
func Filter(expr string) (*regexp.Regexp, error) { return shelltask.Filter(expr) }

// OutputResult is TaskOutput's answer for a background command: its
// status, its exit code once it exited, and its output (the lines filter
// matches, if set), the newest part when it is long.
func OutputResult(rec task.Task, filter *regexp.Regexp) tool.Result {
	return shelltask.OutputResult(rec, filter, deliver.Retrieval(rec.Status))
}

// Report describes a background command in the harness' form: its
// task_id (id, in the harness' spelling), command, status (as the harness
// words it), exit code once it exited, and output (each time it is asked:
// a command's output is read, not delivered).
func Report(rec task.Task, id, status string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "task_id: %s\ntask_type: %s\ncommand: %s\nstatus: %s", id, rec.Kind, prompt.OneLine(rec.Prompt), status)
	if code, ok := shelltask.ExitCode(rec); ok {
		fmt.Fprintf(&b, "\nexit_code: %d", code)
	} else if rec.Status.Terminal() && rec.Error != "" {
		fmt.Fprintf(&b, "\nerror: %s", prompt.OneLine(rec.Error))
	}
	out, err := shelltask.Text(rec.OutputFile, shelltask.ReadLimit, nil)
	if err != nil {
		fmt.Fprintf(&b, "\nerror: cannot read its output: %v", err)
	}
	if out = strings.TrimRight(out, "\n"); out != "" {
		fmt.Fprintf(&b, "\noutput:\n%s", prompt.Escape(out))
	}
	return b.String()
}
