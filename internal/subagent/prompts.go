package subagent

import (
	"bytes"
	"embed"
	_ "embed"
	"strings"
	"sync"
	"text/template"

	"github.com/cadre-dev/cadre/internal/tmplexec"
)

// Model-facing text lives in these files, reviewed like code.
var (
	//go:embed prompts/agent_tool.md
	agentToolText string
	//go:embed prompts/task_tool.md
	taskToolText string
	//go:embed prompts/notification.md
	notificationText string
	//go:embed prompts/launched.md
	launchedText string
	//go:embed prompts/task_output.md
	taskOutputText string
	//go:embed prompts/task_stop.md
	taskStopText string
	//go:embed prompts/task_list.md
	taskListText string
	//go:embed prompts/send_message.md
	sendMessageText string
	//go:embed prompts/team_agent.md
	teamAgentText string
	//go:embed prompts/team_intro.md
	teamIntroText string
	//go:embed prompts/team_spawned.md
	teamSpawnedText string
	//go:embed prompts/team_idle.md
	teamIdleText string
	//go:embed prompts/team_message.md
	teamMessageText string
	//go:embed prompts/team_task_done.md
	teamTaskDoneText string
	//go:embed prompts/team_send_message.md
	teamSendMessageText string
	//go:embed prompts/list_agents.md
	listAgentsText string

	// The templates are parsed on first use (lazy): a process that never
	// renders one (cadre version, a run without subagents) does not pay
	// for it at start-up.
	agentToolTmpl    = lazy("agent_tool", agentToolText, nil)
	taskToolTmpl     = lazy("task_tool", taskToolText, nil)
	notificationTmpl = lazy("notification", notificationText, frameFuncs)
	launchedTmpl     = lazy("launched", launchedText, nil)
	taskOutputTmpl   = lazy("task_output", taskOutputText, nil)
	taskStopTmpl     = lazy("task_stop", taskStopText, nil)
	taskListTmpl     = lazy("task_list", taskListText, nil)
	sendMessageTmpl  = lazy("send_message", sendMessageText, nil)
	// Agent teams' (team.go).
	teamAgentTmpl       = lazy("team_agent", teamAgentText, nil)
	teamIntroTmpl       = lazy("team_intro", teamIntroText, nil)
	teamSpawnedTmpl     = lazy("team_spawned", teamSpawnedText, nil)
	teamIdleTmpl        = lazy("team_idle", teamIdleText, frameFuncs)
	teamMessageTmpl     = lazy("team_message", teamMessageText, frameFuncs)
	teamTaskDoneTmpl    = lazy("team_task_done", teamTaskDoneText, frameFuncs)
	teamSendMessageTmpl = lazy("team_send_message", teamSendMessageText, nil)
	listAgentsTmpl      = lazy("list_agents", listAgentsText, nil)
)

// lazy returns a function that parses the template on its first call.
// They run on tmplexec, not text/template's executor (see its doc.go).
func lazy(name, text string, funcs template.FuncMap) func() *tmplexec.Template {
	return sync.OnceValue(func() *tmplexec.Template {
		return tmplexec.New(template.Must(template.New(name).Funcs(funcs).Parse(text)), funcs)
	})
}

// frameFuncs let a template escape a child's text and frame it (frame.go).
var frameFuncs = template.FuncMap{
	"escape":    escapeTags,
	"untrusted": func() string { return untrustedNote },
}

func render(t *tmplexec.Template, data any) string {
	// Rendered for every spawn and notification: a buffer sized for a
	// prompt rarely grows, and String keeps an exact copy, not the
	// buffer's spare room, alive in the conversation.
	var b bytes.Buffer
	b.Grow(1024)
	if err := t.Execute(&b, data); err != nil {
		// The templates are ours and their data is fixed in shape: a failure
		// is a bug to surface loudly in tests.
		panic("subagent: template " + t.Name() + ": " + err.Error())
	}
	return strings.TrimSpace(b.String())
}

//go:embed prompts/harness_*.md prompts/gateway_*.md
var profilePromptFS embed.FS

// profilePrompts() holds the harness and gateway tool descriptions, each named
// after its file ("harness_agent_spawn.md").
var profilePrompts = sync.OnceValue(func() *tmplexec.Template {
	return tmplexec.New(template.Must(template.ParseFS(profilePromptFS, "prompts/harness_*.md", "prompts/gateway_*.md")), nil)
})

func profilePrompt(name string, data any) string {
	return render(profilePrompts().Lookup(name), data)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
