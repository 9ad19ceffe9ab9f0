// Package npm finds the other ecosystems' official programs that cadre's
// end-to-end tests talk to: the Claude Agent SDK and Claude Code, the ACP
// TypeScript library, the reference MCP servers. They are pinned in
// testdata/npm/package.json and installed there by .ci/run (npm ci).
//
// A test that needs them and finds them missing fails under CI (CI=true),
// which must never skip them, and elsewhere skips saying what to run.
package npm
