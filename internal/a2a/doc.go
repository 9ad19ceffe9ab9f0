// Package a2a serves cadre's main agent over the Agent2Agent protocol v1.0
// (github.com/a2aproject/a2a-go/v2): the agent card, the JSON-RPC and
// HTTP+JSON bindings and their SSE streams. A message runs the main agent
// through the runtime (cadre.Runtime.Open); the A2A context id names the
// cadre session, so a second message in a context continues it; the task's
// state follows the run (working, input-required while a tool call waits
// for approval, completed, failed, canceled) and its artifact carries the
// answer.
//
// The package is a front end: the runtime does the work, this package only
// translates between its events and A2A's.
package a2a
