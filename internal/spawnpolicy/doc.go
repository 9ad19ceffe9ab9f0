// Package spawnpolicy decides, before a subagent starts, what it gets
// (DESIGN §5): where it works (its workspace root and cwd, inside its
// parent's), which model it runs on (S-A3), the permission rules it runs
// under (its memory directory's grants among them), the task rules it
// spawns under, which tools of the pool it is given (S-P2), and which of
// its definition's own hooks may run.
//
// Every input that came from a model's tool call — a cwd, a model name, a
// tool list — is checked here against what the user set, so that
// delegating is never a way around it. Spawning is the subagent core's;
// it asks this package and acts on the answers.
package spawnpolicy
