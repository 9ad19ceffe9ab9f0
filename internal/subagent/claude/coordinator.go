package claude

import (
	_ "embed"
	"strings"
)

// Coordinator mode (S-A7): the main agent only orchestrates. It leads the
// session's team (team.go), keeps only the tools that delegate and steer,
// and every Agent call it makes runs in the background on the agent's own
// model; forks are off (the runtime turns Config.Fork off).

//go:embed prompts/coordinator.md
var coordinatorText string

// CoordinatorPrompt is what a coordinator's system prompt adds: how to
// plan, fan out, wait for notifications and synthesise.
func CoordinatorPrompt() string { return strings.TrimSpace(coordinatorText) }

// CoordinatorTool reports whether a coordinator keeps the tool of this
// name. StructuredOutput (--json-schema) stays: it is how the answer is
// given, not work done.
func CoordinatorTool(name string) bool {
	switch name {
	case "Agent", "SendMessage", "TaskStop", "TaskOutput", "StructuredOutput":
		return true
	}
	return teamTool(name)
}

// coordinated is a coordinator's Agent call as it runs: in the background,
// on the agent's own model, never waited for.
func coordinated(in AgentInput) AgentInput {
	in.RunInBackground, in.Model, in.TimeoutSeconds = true, "", nil
	return in
}
