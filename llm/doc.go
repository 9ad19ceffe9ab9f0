// Package llm defines the provider-neutral vocabulary cadre speaks with
// language models: messages made of content blocks, tool specifications,
// usage, stop reasons, streaming events and the Model interface that every
// provider adapter implements.
//
// The JSON form of these types is the Anthropic Messages shape, because that
// is also the shape of Claude Code's stream-json protocol and of cadre's
// transcripts: a Message marshals to exactly what a stream-json "assistant"
// or "user" line carries in its "message" field.
package llm
