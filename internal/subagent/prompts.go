package subagent

import (
	_ "embed"
	"text/template"

	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/tmplexec"
)

// Model-facing text lives in these files, reviewed like code; the
// profiles' own live beside them (claude/prompts, …), a child's system
// prompt and context in internal/childprompt, a background shell's in
// internal/shelltask.
var (
	//go:embed prompts/notification.md
	notificationText string

	// Parsed on first use (lazy): a process that never renders it (cadre
	// version, a run without subagents) does not pay for it at start-up.
	notificationTmpl = lazy("notification", notificationText, frameFuncs)
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
