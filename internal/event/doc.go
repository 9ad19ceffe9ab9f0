// Package event defines what cadre reports while it works — the system,
// assistant, user and result messages of every session, subagents' included —
// and the Bus that carries them from the runtime to front ends (stream-json
// output, the Go SDK iterator, the TUI, the server's web view and A2A).
//
// Events are Claude Code's headless protocol in Go form: the output package
// writes each one as one stream-json line without further lookup.
package event
