// Package opencode is the opencode tool profile (DESIGN §12): OpenCode's
// task tool over the spawn core of internal/subagent — always in the
// foreground, its reply OpenCode 1.18's <task> block. It reaches runs only
// through the core's exported calls (subagent's api.go).
package opencode
