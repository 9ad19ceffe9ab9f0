// Package event holds the vocabulary of a session's stream: Event and its
// payloads (InitInfo, AssistantInfo, TaskEvent, ResultInfo, …), the
// stream's types and subtypes, and the values they name (PermissionMode,
// SubagentCost, Todo). They are what `cadre -p --output-format
// stream-json --verbose` prints, as typed Go values.
//
// It is vocabulary shared without copies: the SDK (package cadre)
// re-exports every type here with a type alias (cadre.Event is
// event.Event), and the runtime's event bus uses the payload types
// themselves (an init's InitInfo, a result's ResultInfo, an assistant
// message's AssistantInfo), so they reach SDK users as the runtime made
// them. It imports nothing of cadre but the public llm and record
// packages. docs/sdk.md ("Vocabulary packages") says why.
package event
