// Package structured is structured output (Claude Code's --json-schema):
// the StructuredOutput tool whose input schema is the caller's JSON
// schema. The model gives its final answer by calling it; the call's
// input, checked against the schema like every tool input, becomes the
// result's structured_output, and the agent's turn ends with it.
package structured
