// Package acp serves the Agent Client Protocol (ACP) over a pair of pipes:
// it is what `cadre acp` runs for editors (Zed, JetBrains, Neovim plugins).
//
// It is a thin consumer of the runtime. Each ACP session is one live
// conversation of a cadre Runtime (one Runtime per working directory); the
// conversation's events — the main agent's and every subagent's — are
// translated into session/update notifications, its permission questions
// into session/request_permission round trips, and session/cancel into an
// interrupt of the running turn.
//
// ACP has no nested tool calls, so the subagent tree is drawn the way an
// editor can show it: the Agent call that starts a subagent is a tool call
// whose content carries the child's progress (its current tool, its latest
// text, at the end its result), and every tool call a subagent makes is a
// tool call of its own, titled with the agent's name and tagged in _meta
// with the Agent call it belongs to.
package acp
