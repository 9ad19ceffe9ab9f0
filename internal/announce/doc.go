// Package announce is the gateway's announce step (S-N2,
// subagents.announce: summarize): one more turn in a finished child's
// session asks it for a report to its requester, and the report is
// normalised to Status / Result / Notes and a stats line. The status comes
// from the runtime's outcome, never from the model's text; a child may
// decline with ANNOUNCE_SKIP.
package announce
