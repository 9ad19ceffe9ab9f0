// Package claude is the claude tool profile (DESIGN §12), Claude Code's
// tools over the spawn core of internal/subagent: Agent (alias Task) and
// its input (agent_input.go), SendMessage, TaskOutput, TaskStop and
// TaskList (tasks.go), agent teams — teammates, the team's SendMessage and
// task list, ListAgents (team.go) — and coordinator mode (coordinator.go).
// It reaches runs only through the core's exported calls (subagent's
// api.go); its model-facing text is in prompts/, its input schemas in
// schemas/.
package claude
