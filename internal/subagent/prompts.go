package subagent

import (
	_ "embed"
	"text/template"

	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/tmplexec"
)

// Model-facing text lives in these files, reviewed like code; the
// profiles' own live beside them (claude/prompts, …).
var (
	//go:embed prompts/context.md
	contextText string
	//go:embed prompts/child_system.md
	childSystemText string
	//go:embed prompts/notification.md
	notificationText string
	//go:embed prompts/shell_notification.md
	shellNotificationText string
	//go:embed prompts/shell_launched.md
	shellLaunchedText string

	// The templates are parsed on first use (lazy): a process that never
	// renders one (cadre version, a run without subagents) does not pay
	// for it at start-up.
	contextTmpl      = lazy("context", contextText, nil)
	childSystemTmpl  = lazy("child_system", childSystemText, nil)
	notificationTmpl = lazy("notification", notificationText, frameFuncs)
	// A background shell's (shell.go).
	shellNotificationTmpl = lazy("shell_notification", shellNotificationText, frameFuncs)
	shellLaunchedTmpl     = lazy("shell_launched", shellLaunchedText, nil)
)

// lazy, render, oneLine and clip are the prompt package's helpers, under
// the names the core's files use.
func lazy(name, text string, funcs template.FuncMap) func() *tmplexec.Template {
	return prompt.Lazy(name, text, funcs)
}

func render(t *tmplexec.Template, data any) string { return prompt.Render(t, data) }

func oneLine(s string) string { return prompt.OneLine(s) }

func clip(s string, n int) string { return prompt.Clip(s, n) }

// frameFuncs let a template escape a child's text and frame it (frame.go).
var frameFuncs = prompt.FrameFuncs()
