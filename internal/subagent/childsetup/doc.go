// Package childsetup is what a child is given before its first turn,
// beside its place, model, rules and tools (internal/spawnpolicy): its
// hooks — the runtime's, then its definition's own where they may run —
// and the context SubagentStart hooks add; its first user message (the
// definition's initialPrompt, the task, the skills its skills field
// preloads); its memory's section of the system prompt; and, with
// isolation "worktree" (S-W1), the git worktree it works in, settled when
// it ends (Isolate, Settle).
//
// What it cannot honour (a hook file it may not run, a skill that is not
// there, a memory it cannot read) is logged or returned as a warning: the
// child still starts.
package childsetup
