// Package cadre is the Go SDK of the cadre agent runtime: open a Runtime on
// a working directory, Run a prompt, and range over the session's events as
// they happen — the same messages `cadre -p --output-format stream-json
// --verbose` prints, as typed Go values. The cadre CLI is built on this API
// and nothing else.
//
//	rt, err := cadre.New(ctx, cadre.Options{Cwd: dir, Model: "anthropic:claude-sonnet-5-5"})
//	if err != nil { ... }
//	defer rt.Close()
//	for ev, err := range rt.Run(ctx, cadre.Request{Prompt: "What does main.go do?"}) {
//		if err != nil { ... }
//		if ev.Type == cadre.EventResult { fmt.Println(ev.Result.Result) }
//	}
//
// Settings are read as the CLI reads them (~/.cadre/settings.json, then the
// project's .cadre/settings.json and .cadre/settings.local.json); Options
// override them. Options also carry what only a program can give: a model
// of its own (LLM), subagents declared in code (Agents, AgentFactories),
// tools of its own (Tools), the answer to permission requests (Permission)
// and a logger (Logger).
//
// Events: every Event has a Type and, for system and result events, a
// Subtype; its payload is in the matching field (Init, Message and
// Assistant, Task for the task_* events of background subagents, Compact,
// Result). A subagent's messages come in the same stream, tagged with
// ParentToolUseID, the id of the Agent tool call that started it.
//
// Records: Sessions and Session read the session index and transcripts,
// Tasks and Task the records of background runs, Agents the subagent
// definitions found and where each came from.
//
// Every type the API names is declared here or in a public package of the
// module: llm and tool, and the vocabulary packages event, record,
// approval, hook, agent and view, which the runtime shares and whose
// types this package re-exports under its own names (Event is
// event.Event).
// docs/sdk.md is the guide; the package's examples run offline.
package cadre
