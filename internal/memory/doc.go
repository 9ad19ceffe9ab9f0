// Package memory gives an agent with a memory scope (an agent file's
// "memory: user|project|local") its own persistent directory, in the
// places Claude Code keeps them, so the two share an agent's memory:
//
//	user     ~/.claude/agent-memory/<agent>/
//	project  <project>/.claude/agent-memory/<agent>/    (checked in)
//	local    <project>/.claude/agent-memory-local/<agent>/  (not checked in)
//
// The directory's MEMORY.md is the agent's index of what it remembers: its
// first MaxLines lines go into the agent's system prompt at every run,
// with instructions on keeping it (memory.md). The agent reads and changes
// the directory with its ordinary file tools; Rules are the allow rules
// that let it, there and nowhere else, without asking, and the directory's
// protection as part of .claude is lifted for it alone
// (permission.Policy.Writable).
package memory
