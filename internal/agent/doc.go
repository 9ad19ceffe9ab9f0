// Package agent says which subagents exist: it loads agent definitions
// from files, settings and the Go SDK, validates them, and settles which
// one is active for each name (DESIGN.md §4).
//
// # Sources and precedence
//
// Load reads these sources in order; for each name the last valid
// definition wins:
//
//  1. built-in general-purpose (see GeneralPurpose);
//  2. the user directory, $CADRE_HOME/agents/*.md (Claude Code format);
//  3. the project directories, in this order, so that cadre's own
//     directory wins among them:
//     .claude/agents/*.md (Claude Code format),
//     .opencode/agent/*.md and .opencode/agents/*.md (OpenCode format),
//     workspace/subagents/*.md (harness format),
//     .cadre/agents/*.md (Claude Code format);
//  4. the settings' "agents" object (JSON, loaded sorted by name);
//  5. Go SDK declarations, then SDK factories.
//
// Only *.md files at the first level of a directory are read, sorted by
// name; dot files are skipped and a missing directory is fine. Names are
// case-folded: "Reviewer" and "reviewer" are the same agent.
//
// A definition that fails to load is reported (file:line: message) and
// left out; everything else still loads. An invalid definition never
// shadows a valid one: a broken override in .cadre/agents leaves the
// working agent of the same name from .claude/agents active. Entries
// lists every definition seen, active, shadowed or invalid, for
// `cadre agents`.
//
// # Markdown files
//
// A file starts with YAML frontmatter between two "---" lines; the rest,
// trimmed, is the prompt:
//
//	---
//	name: code-reviewer
//	description: Reviews code for correctness risks. Use after a change.
//	tools: Read, Grep, Glob, Bash
//	model: sonnet
//	---
//	You are a focused code reviewer…
//
// Frontmatter that is not valid YAML because of a value such as
// "description: Use this: when…" is read again with those values quoted,
// as Claude Code does, and a warning says so. Unknown fields are warnings
// with their line, not failures.
//
// Fields (every format, unless noted):
//
//	name                Claude Code format only, and required there; other
//	                    formats take the name from the file name (or the
//	                    settings key) and ignore this field with a warning
//	description         required: tells the parent when to use the agent
//	prompt              the prompt when there is no body (settings: the prompt)
//	tools               allowlist: a YAML list or "Read, Grep, Glob"; absent
//	                    or "*" means every available tool, an empty string or
//	                    list none
//	disallowedTools     denylist, same syntax
//	model               sonnet, opus, haiku, inherit, provider:model or
//	                    provider/model
//	effort, thinking    reasoning effort, kept as written
//	permissionMode      plan, default, acceptEdits or bypassPermissions
//	background          true: always run in the background
//	isolation           worktree or remote
//	maxTurns, maxIters  turn limit, ≥ 0 (0: the run's own limit)
//	memory              user, project or local
//	mcpServers, requiredMcpServers, hooks, skills, initialPrompt, color
//	hidden              true: left out of listings, still callable
//	omitClaudeMd        true: as a subagent, no CLAUDE.md files (AGENTS.md
//	                    and TOOLS.md still), as in Claude Code
//	allowAgents         agents this one may start by agentId through the
//	                    gateway's sessions_spawn besides its own ("*": any)
//	mode                primary, subagent or all
//	temperature         a number
//	workspace           {mode: isolated|shared, path: dir}, or just the path
//	url, headers        a remote agent: absolute http(s) URL and its headers
//	permission          OpenCode-style rules, see below
//
// # Claude Code files
//
// Files from Claude Code load unchanged: name and description are
// required, "\n" in a description is a newline, tools may be a
// comma-separated string (commas inside parentheses do not split), and
// the Claude Code fields above keep their meaning. Claude Code's dontAsk
// and auto permission modes are not cadre modes and are refused.
//
// # OpenCode files
//
// Files from OpenCode load unchanged. The name is the file name.
// disable: true turns the agent off (it is skipped silently). steps and
// maxSteps set the turn limit. prompt: "{file:./prompt.txt}" reads a file
// relative to the agent file (used only when there is no body). tools may
// be OpenCode's map of booleans: false entries become disallowedTools,
// with OpenCode's names mapped to cadre's (write→Write, edit and patch→Edit,
// bash→Bash, read→Read, grep→Grep, glob→Glob, list→LS, task→Agent,
// webfetch→WebFetch, todowrite→TodoWrite, todoread→TodoRead; other names
// and wildcards such as "mymcp_*" as given); with "*": false, the true
// entries become the allowlist.
//
// permission converts to Claude Code-syntax rules, keeping key order:
//
//	edit: deny                          → deny "Edit"
//	bash: ask                           → ask "Bash"
//	bash: {"git push": ask, "git *": allow, "*": deny}
//	                                    → ask "Bash(git push)", allow "Bash(git *)", deny "Bash"
//	webfetch, read, grep, glob, list    → WebFetch, Read, Grep, Glob, LS likewise
//	task: {"*": deny, "review-*": allow} → TaskRules, in order (last match wins)
//
// Other permission keys are ignored with a warning. cadre checks deny
// rules, then ask, then allow, whatever their order, where OpenCode lets
// the last matching rule win; a narrower rule placed after a stricter "*"
// therefore loses its effect, and a warning says so.
//
// # Harness files
//
// workspace/subagents/*.md: the file name is the id (a name field is
// ignored with a warning); description is required; maxIters (or
// maxTurns) defaults to 10; the workspace defaults to isolated.
//
// # Settings
//
// The settings' "agents" object maps names to JSON definitions with the
// same field names, "prompt" holding the prompt:
//
//	"agents": {"reviewer": {"description": "…", "prompt": "…", "tools": ["Read"]}}
//
// Messages name the settings file and key path
// ("agents.reviewer.tools: want a list of strings or a comma-separated string").
//
// # SDK
//
// Go declarations and factory results are checked with stricter rules:
// Workspace.Path beside a Prompt is an error rather than a warning. A
// declaration whose Format is FormatHarness gets the harness defaults. A
// factory that fails (or panics) is a Problem; the others still load.
//
// # Declaration modes and workspaces
//
// A definition is a definition workspace (workspace.path: a directory
// whose AGENTS.md is the prompt base), an inline body, or a remote agent
// (url), exclusively (S-D3): url with workspace.path or a body is an
// error; workspace.path with a body ignores the body with a warning in
// files and is an error in SDK declarations. Definition.Resolve applies
// the workspace table (S-D5); only harness declarations default to an
// isolated workspace (<main>/agents/<name>/workspace), every other source
// to the main workspace.
package agent
