// Package approval holds what a tool call that needs approval asks
// (Request, with the FileChange an edit would make) and how it is answered
// (Decision, RuleUpdate), the Func a program answers with, and Approvals,
// the queue a front end answers them from one at a time.
//
// It is public vocabulary: the SDK (package cadre) re-exports its names
// (cadre.PermissionRequest is approval.Request, cadre.PermissionDecision
// approval.Decision), and the TUI, the web view and the A2A server use the
// same queue. docs/sdk.md ("Vocabulary packages") says why.
package approval
