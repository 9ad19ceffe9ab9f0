// Package shelltask holds what a background shell — a Bash call with
// run_in_background, a task of kind local_bash — is besides its run: its
// bounded output file, what its end means (status, exit code, the
// sentence that says how it ended), how a reader filters its output, and
// what it says to the model (its launch text, its notification, its
// TaskOutput answer).
//
// The run itself is the subagent core's: a background shell lives in its
// agent's group as a background subagent does, and ends through the one
// delivery machinery. The command is started by the Bash tool
// (builtin.Shell.Start), through the one path every Bash command takes.
package shelltask
