// Package telemetry makes cadre's OpenTelemetry spans: one for each agent
// run (invoke_agent), one for each model call (chat, after the GenAI
// semantic conventions) and one for each tool call (execute_tool).
//
// It knows only the OpenTelemetry trace API. The zero Tracer starts no span
// and costs a nil check, so a runtime nobody asked to trace pays nothing;
// the SDK and the OTLP exporter that make spans real live in
// internal/telemetry/otlpenv, which only the command line imports.
//
// A span is the child of the span in the context it starts from. That is
// how a subagent's run span becomes the child of the Agent tool call that
// started it: the spawn carries the call's span context into the run's
// context, which is otherwise detached from the call (see
// internal/subagent's launch).
//
// Spans carry identifiers, names, models, token counts and outcomes — never
// prompts, replies, tool inputs or tool outputs.
package telemetry
