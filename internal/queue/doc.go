// Package queue is the command queue (DESIGN §7.4): the one place through
// which user prompts, task notifications and messages for running agents
// enter an agent's next turn.
//
// Entries have a priority (now > next > later; user input is next,
// notifications later, so they never overtake the user) and an optional
// target agent id: a subagent's loop takes the entries addressed to it, the
// main loop those with no target. Within a priority, entries keep their
// order.
package queue
