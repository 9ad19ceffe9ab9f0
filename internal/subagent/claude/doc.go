// Package claude is the claude tool profile (DESIGN §12), Claude Code's
// tools over the spawn core of internal/subagent: Agent (alias Task) and
// its input (agent_input.go), SendMessage, TaskOutput, TaskStop and
// TaskList (tasks.go), agent teams — teammates, the team's SendMessage and
// task list, ListAgents (team.go); plan approval of plan-mode teammates
// (team_plan.go); the roster kept in the store so a team outlives its
// process (roster.go) and the roster front ends show (team_view.go) — and
// coordinator mode (coordinator.go).
// It reaches runs only through the core's exported calls (subagent's
// api.go); its model-facing text is in prompts/, its input schemas in
// schemas/.
package claude
