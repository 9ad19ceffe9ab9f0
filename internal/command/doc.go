// Package command loads slash commands and skills: markdown prompt
// templates a user invokes by typing /name (DESIGN.md §9 S-F2, §15 S-E3).
// The formats are Claude Code's custom slash commands and skills, so
// files written for Claude Code load unchanged.
//
// # Where they are found
//
// Load reads these places in order; for each name the last valid file
// wins, so a project overrides the user, and .cadre overrides .claude:
//
//  1. $CADRE_HOME/commands/**/*.md (user commands);
//  2. $CADRE_HOME/skills/<name>/SKILL.md (user skills);
//  3. OpenCode's .opencode/skill/<name>/SKILL.md and
//     .opencode/skills/<name>/SKILL.md, then .claude/commands/**/*.md,
//     then .claude/skills/<name>/SKILL.md, in the project directory;
//  4. .cadre/commands/**/*.md, then .cadre/skills/<name>/SKILL.md.
//
// A missing directory is fine. Dot files and dot directories are skipped.
// A file that cannot be loaded is reported as "path:line: message" and
// left out, and every other file still loads; a broken file never hides
// a working command of the same name from an earlier place.
//
// # Names
//
// A command is named by its file, without ".md"; each subdirectory adds a
// namespace, so commands/frontend/component.md is /frontend:component. A
// skill is named by its folder: skills/code-review/SKILL.md is
// /code-review; other files in the folder (scripts, references) are the
// skill's own and are not loaded. Names are case-folded ("Review.md" is
// /review) and must match [a-z0-9][a-z0-9_:-]{0,63}; a file with any
// other name is reported and not loaded.
//
// # File format
//
// Optional YAML frontmatter between two "---" lines, then the prompt:
//
//	---
//	description: Review the staged changes for correctness risks
//	argument-hint: [path] [focus]
//	allowed-tools: Read, Grep, Bash(git diff:*)
//	context: fork
//	---
//	Review the changes under $1, paying attention to $2.
//
// The fields:
//
//   - description: what it does. A command without one is described by
//     the first non-empty line of its prompt; a skill must have one.
//   - argument-hint: shown after the name in listings, e.g. "[path]"
//     (written as-is; no quotes needed).
//   - allowed-tools: the tools it may use, as a YAML list or one string
//     separated by commas or spaces ("Read, Grep" or "Read Grep");
//     commas and spaces inside parentheses do not separate
//     ("Bash(git diff, git log)" is one entry). With context: fork it
//     restricts the forked child to these tools.
//   - model: the model to run it with.
//   - context: "fork" runs it in a forked child whose output becomes the
//     command's output; absent, the expanded prompt is sent in the
//     conversation. Any other value is an error.
//   - agent: with context: fork, the subagent type the child runs as
//     (without agent and model it is a true fork of the caller).
//   - background: with context: fork, true starts the child in the
//     background when a user types /name; its result comes back as a task
//     notification.
//   - disable-model-invocation: true keeps the model from invoking it;
//     only a user typing /name can.
//   - name: optional; when it differs from the name the path gives, the
//     path's name is used and a warning says so.
//   - version, license: skill metadata, accepted and ignored.
//
// Any other field is ignored with a warning that gives its line.
// Frontmatter that YAML rejects is read the way Claude Code reads it,
// with the offending values quoted, and a warning says so.
//
// # Arguments
//
// "/review src/auth 'error paths'" runs review with the arguments
// src/auth 'error paths'. In the prompt:
//
//   - $ARGUMENTS is every argument, exactly as typed;
//   - $1, $2… are single arguments, split as a shell splits words
//     (quotes group: $2 is "error paths"); an argument not given is
//     empty. A prompt that uses $0 counts from 0, as Claude Code's
//     skills do: $0 is the first argument, $1 the second;
//   - $ARGUMENTS[0], $ARGUMENTS[1]… are single arguments counted from 0;
//   - ${CLAUDE_SKILL_DIR} and ${CADRE_SKILL_DIR} are a skill's folder, so
//     it can point at its own scripts and references.
//
// When the prompt uses none of the argument placeholders and arguments
// are given, they are added at the end after a blank line, as
// "ARGUMENTS: <arguments>".
//
// Claude Code runs shell commands written in a prompt as !`command`
// before sending it. cadre does not: the text is left as written, and
// loading warns about each such line.
package command
