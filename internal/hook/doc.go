// Package hook is cadre's hooks engine: programs and Go functions that run
// on the runtime's events (a tool call about to run, a prompt submitted, an
// agent about to stop, …) and may block, change or annotate what happens.
//
// It speaks Claude Code's hook protocol so that a repository's hooks work
// unchanged: settings name hooks as {Event: [{matcher, hooks: [{type:
// "command", command, timeout}]}]}; a command gets the event's JSON on
// standard input (Input, with Claude Code's field names); exit code 0 with
// JSON on standard output is an Output, exit code 2 blocks with standard
// error as the reason, any other code is an error that blocks nothing. A
// Go function (the SDK's Options.Hooks) is a second kind of Handler with
// the same meaning: it gets the same Input and returns an Output.
//
// The engine (Engine) runs the handlers whose matcher fits an event, all at
// once, each under its timeout (a command's whole process group is killed
// when it runs out), and folds their answers into one Result. Callers —
// the loop around tool calls, the runner at a turn's start and stop, the
// subagent service around a child's run — read the Result; they never see
// a handler.
package hook
