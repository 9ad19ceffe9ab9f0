// Package runner runs one agent in one session: it records the prompt, runs
// the loop, writes every message to the session's transcript before
// publishing it on the event bus under the same uuid, adds the run's usage
// and cost to the totals of the run tree, and finishes the session.
//
// The main session and every subagent run through here, so what a user sees
// live is exactly what was saved, for every agent alike. Both get their loop
// settings from LoopConfig and SystemPrompt, and a headless conversation
// drains what reaches the agent between turns through Conversation.Drain.
package runner
