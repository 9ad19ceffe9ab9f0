// Package forkcmd runs children that no model's spawn call asked for,
// through the spawn core's Spawn like any profile: a slash command or a
// skill whose frontmatter says `context: fork` (S-F2) — a true fork of the
// caller when it names no agent or model, else that agent handed the
// conversation — and the TUI's "@name text", a foreground run of the named
// agent.
//
// It is a client of internal/subagent, as the profiles are: the runtime
// calls it, the core does not.
package forkcmd
