// Package skill is the Skill tool: the model invokes one of the project's
// or the user's skills (SKILL.md folders, loaded by package command) by
// name, and the skill's instructions enter the conversation as the tool's
// result (DESIGN.md §15 S-E3). The input is Claude Code's, {skill, args}.
//
// The skills the model may invoke are listed in the tool's description —
// every skill whose disable-model-invocation is not set — so the list is
// part of the cached prompt, not of every turn. A skill's allowed-tools are
// granted to the calling session (permission.Grants) when it is invoked, as
// Claude Code grants them; deny and ask rules still come first. A
// `context: fork` skill (Forks) is instead run by the caller's Fork, a fork
// of the turn that invoked it, whose answer is the tool's result (S-F2).
//
// Preload renders the same text for an agent file's skills field, which
// puts a skill in a subagent's first message before it starts.
package skill
