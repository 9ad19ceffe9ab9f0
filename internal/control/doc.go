// Package control speaks the input side of Claude Code's headless protocol:
// with --input-format stream-json, standard input is JSONL of user messages
// (each one a turn of one live session) and control requests, and standard
// output carries the session's stream-json lines interleaved with control
// responses and with the requests cadre sends (can_use_tool, hook_callback).
// This is what the Claude Agent SDK speaks to the executable it starts.
//
// Serve is the protocol engine: it reads the input, routes control
// requests to their handlers, matches the responses to cadre's own
// requests by request_id, and writes every output line whole, one at a
// time. It drives a Conversation, an interface defined here so the engine
// can be tested with a fake; Run binds it to a cadre Runtime.
package control
