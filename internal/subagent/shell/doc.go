// Package shell runs background shells: a Bash call with
// run_in_background is a task of kind local_bash, owned by the agent that
// made it, exactly as a background subagent is owned by the agent that
// spawned it. It lives in that agent's run group (stopped with it: the
// session's end, the service's Close), is tracked by the spawn core so
// that TaskOutput, TaskStop and the harness' task_output and task_cancel
// reach it (Tracker), heartbeats like any background run (a stop from
// another process reaches it), and ends through the one delivery
// (internal/subagent/deliver): one notification, unless a reader took the
// end.
//
// The command itself is started by the Bash tool (builtin.Shell.Start),
// through the one path every Bash command takes: its process group, its
// sandbox. This package owns its lifecycle; internal/shelltask its output
// file, what its end means and its readers' words.
//
//	shell.go   Runner: start, watch and finish an agent's background commands
//	report.go  what the reader tools show of one: Filter, OutputResult, Report
package shell
