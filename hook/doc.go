// Package hook holds hooks written in Go: the events they run on (Event),
// how a program groups them (Matcher, Func), what a hook is told (Input)
// and what it answers (Output, SpecificOutput), with the meaning Claude
// Code's settings hooks have (docs/hooks.md).
//
// It is public vocabulary: the SDK (package cadre) re-exports its names
// (cadre.HookOutput is hook.Output), and the runtime's hook engine
// answers with the same Output type, so a Go hook's answer and a command
// hook's are one value. Input stays a type of its own beside the engine's:
// a command reads Claude Code's wire JSON, where some fields are null
// rather than empty. docs/sdk.md ("Vocabulary packages") says why.
package hook
