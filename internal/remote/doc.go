// Package remote reaches a subagent that runs on another server over the
// Agent2Agent protocol v1.0 (an agent definition with url:). It is an
// llm.Model: the subagent's run is an ordinary child run, with its session,
// background task, TaskOutput, TaskStop and notification, whose one "model
// call" per turn sends the turn's message to the remote agent and returns
// its answer. Stopping the run (TaskStop, a timeout, the parent stopping)
// cancels the remote task.
//
// The definition's url is a trust boundary: a repository's agent file
// chooses it. Only http and https are accepted (the agent loader checks the
// file; New checks again), the agent card must name interfaces on that same
// origin, and the definition's headers are sent to that origin only, never
// to another host an agent card or a redirect points at.
package remote
