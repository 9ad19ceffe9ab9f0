// Package output writes a run's events in the formats of Claude Code's
// headless mode: text (the final answer), json (one result object, or with
// verbose an array of every message) and stream-json (one JSON object per
// line, written and flushed as it happens).
//
// Line shapes follow ../shared/protocol/claude-stream-json-shapes.md: every
// field a client reads (type, subtype, session_id, uuid, parent_tool_use_id,
// message.*, result, usage, total_cost_usd, num_turns, duration_ms,
// is_error) is present with the same meaning.
package output
