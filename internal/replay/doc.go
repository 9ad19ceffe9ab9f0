// Package replay runs a recorded session again without a provider: the
// assistant messages of its transcripts are fed back in order, one agent
// at a time, while the tools run for real, and every re-run tool result is
// compared with the recorded one.
//
// A Recording is a session tree read back from the store: the conversation
// being replayed and every subagent conversation under it, each with its
// recorded turns (an assistant message and the results of its tool calls).
//
// Model is an llm.Model that answers from a Recording. A request is matched
// to a recorded conversation by its first user message (the prompt, for a
// subagent the Agent call's) and, after the first turn, by the assistant
// message it was last given, which Model itself emitted with the recorded
// tool_use ids; the turn is the number of assistant messages so far, as for
// the scripted model. Before it answers turn n+1 it compares the tool
// results of turn n in the request with the recorded ones (after Normalizer
// has removed what legitimately varies) and records the first Divergence.
// With a live model set, a diverged conversation, or one past FromTurn, is
// answered by the live model from then on; without one the first
// divergence stops the replay.
//
// ReadOnly wraps the tools a read-only replay must not run: they answer
// with the recorded result of the call. Writes lists the files the
// recorded run's file tools changed, for the check that a replay changed
// them too.
//
// The scratch worktree a replay runs in, and the runtime it opens, are the
// root package's (replay.go) and internal/worktree's: this package knows
// recordings, models and tools only.
package replay
