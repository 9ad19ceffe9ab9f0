// Package contextfiles finds the instruction files a project and its user
// keep for coding agents — Claude Code's CLAUDE.md, the AGENTS.md that
// OpenCode and others read — and renders them as the context block the
// model sees before the conversation (DESIGN.md §15 S-E4).
//
// # Which files, in which order
//
// Load reads, each file at most once (a CLAUDE.md that is a link to the
// AGENTS.md beside it counts once):
//
//  1. the user's: $CADRE_HOME/AGENTS.md, $CADRE_HOME/TOOLS.md,
//     $CADRE_HOME/CLAUDE.md and ~/.claude/CLAUDE.md;
//  2. the project's, from the workspace root (the repository root) down to
//     the working directory, in each directory: CLAUDE.md,
//     .claude/CLAUDE.md, AGENTS.md, TOOLS.md, then CLAUDE.local.md (the
//     user's private notes for the project, not checked in).
//
// Each file is followed by the files it imports.
//
// # Subagents
//
// The main agent sees every file. A subagent sees AGENTS.md and TOOLS.md
// (and what they import), the gateway's rule; the CLAUDE.md family only
// where Claude Code would give it its CLAUDE.md (ForSubagent; the caller
// decides which agents those are).
//
// # Imports
//
// A word "@path" outside code spans and fenced code blocks imports the
// file at path — relative to the importing file, absolute, or "~/…" — when
// path looks like one (it has a '/' or a '.'), so "@alice" and e-mail
// addresses stay text. A missing file is skipped silently, as Claude Code
// does.
//
// # Trust
//
// A repository's context file is text someone else wrote. So: imports
// nest at most MaxDepth (5) deep; every file, imported or not, must
// resolve — symbolic links followed — to a regular file inside its
// boundary (the workspace root for the project's files, the home
// directory or $CADRE_HOME for the user's), so "@/etc/passwd",
// "@../../.ssh/id_rsa" or a link that points out read nothing; a file is
// cut at MaxFileBytes and the whole block at MaxTotalBytes. Each refusal
// is a warning naming the file.
package contextfiles
