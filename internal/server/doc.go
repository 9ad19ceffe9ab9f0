// Package server is `cadre serve`'s HTTP front end: a JSON API with
// Server-Sent Events over the runtime's live conversations, sessions,
// tasks and approvals, the web view, and the place where the A2A
// endpoints mount. It holds no agent logic: every endpoint is a call into
// the root package cadre (Runtime.Open, Conversation, Runtime.Sessions,
// Runtime.Tasks, Approvals …), so the server, the CLI, the TUI and the SDK
// behave alike.
//
// Routes (docs/server.md has the wire shapes and curl examples):
//
//	GET  /.well-known/agent-card.json   Config.AgentCard, without auth
//	*    /a2a/…                         Config.A2A, "/a2a" stripped
//	POST /api/runs                      start a run (new or resumed session)
//	GET  /api/runs                      the runs of this server
//	GET  /api/runs/{id}                 one run
//	GET  /api/runs/{id}/events          its events as SSE (Last-Event-ID resumes)
//	POST /api/runs/{id}/messages        queue a user message
//	POST /api/runs/{id}/interrupt       stop the turn in progress
//	POST /api/runs/{id}/abort           stop the turn and every subagent (/stop)
//	POST /api/runs/{id}/close           no more messages: finish, then end
//	POST /api/runs/{id}/stop            stop everything now and end
//	GET  /api/runs/{id}/subagents       its subagent runs, any depth
//	POST /api/runs/{id}/subagents/{target}/messages
//	POST /api/runs/{id}/subagents/{target}/stop
//	GET  /api/runs/{id}/approvals       its pending permission requests
//	POST /api/runs/{id}/approvals/{n}   answer one
//	GET  /api/approvals                 every run's pending requests
//	GET  /api/sessions                  sessions, newest first
//	GET  /api/sessions/{id}             a session and its transcript
//	GET  /api/sessions/{id}/tree        its parent, children and siblings
//	GET  /api/sessions/{id}/team        the team it leads: roster and task list
//	GET  /api/tasks                     task records, newest first
//	GET  /api/tasks/{id}                one task
//	GET  /api/tasks/{id}/output         its output as text
//	POST /api/tasks/{id}/stop           stop it
//
// With a token, every route but the agent card needs
// "Authorization: Bearer <token>".
package server
