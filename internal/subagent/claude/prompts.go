package claude

import (
	_ "embed"

	"github.com/cadre-dev/cadre/internal/subagent/prompt"
)

// Model-facing text lives in these files, reviewed like code.
var (
	//go:embed prompts/agent_tool.md
	agentToolText string
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

	// Parsed on first use (prompt.Lazy).
	agentToolTmpl   = prompt.Lazy("agent_tool", agentToolText, nil)
	launchedTmpl    = prompt.Lazy("launched", launchedText, nil)
	taskOutputTmpl  = prompt.Lazy("task_output", taskOutputText, nil)
	taskStopTmpl    = prompt.Lazy("task_stop", taskStopText, nil)
	taskListTmpl    = prompt.Lazy("task_list", taskListText, nil)
	sendMessageTmpl = prompt.Lazy("send_message", sendMessageText, nil)
	// Agent teams' (team.go).
	teamAgentTmpl       = prompt.Lazy("team_agent", teamAgentText, nil)
	teamIntroTmpl       = prompt.Lazy("team_intro", teamIntroText, nil)
	teamSpawnedTmpl     = prompt.Lazy("team_spawned", teamSpawnedText, nil)
	teamIdleTmpl        = prompt.Lazy("team_idle", teamIdleText, prompt.FrameFuncs())
	teamMessageTmpl     = prompt.Lazy("team_message", teamMessageText, prompt.FrameFuncs())
	teamTaskDoneTmpl    = prompt.Lazy("team_task_done", teamTaskDoneText, prompt.FrameFuncs())
	teamSendMessageTmpl = prompt.Lazy("team_send_message", teamSendMessageText, nil)
	listAgentsTmpl      = prompt.Lazy("list_agents", listAgentsText, nil)
)
