// Package deliver makes a run's result reach the model once (S-N1). It is
// the only place that decides who shows how a run ended: a run's end goes
// out through its notification (Desk.Notify, Desk.Ended), and every reader
// of every profile through one read sequence (Reading: Read, Await, Claim,
// Close); none reads the state below itself.
//
// Who may deliver how a run ended:
//   - the spawn call that waits for the run in the foreground: the result
//     is its reply (Agent, task, agent_spawn, agent_send resuming an agent,
//     a fork command);
//   - the run's notification, queued for the agent that started it, when
//     the run ended in the background;
//   - a reader: a tool that shows the model how a run ended — TaskOutput
//     (claude profile), task_output, wait_async_results and agent_send's
//     wait (harness profile). The gateway's sessions_spawn is only ever
//     notified, and OpenCode's task always waits in the foreground.
//
// What wins:
//   - A run that ended in the foreground belongs to its spawn call, always.
//     A reader that watched it end shows its status and says where the
//     result went (ToSpawner); it never shows the result.
//   - A run that ended in the background goes to the first of its
//     notification and its readers. In this process the run's own state
//     (State, under the Desk's lock) decides; against other processes
//     sharing the store, the task record's notified flag
//     (task.Store.MarkNotified) does. A reader that comes second shows the
//     result only if it can withdraw the notification still queued (the
//     agent has not read it yet); otherwise it says the result was already
//     delivered (Already).
//   - Readers that are watching a run when it ends in the background take
//     its end over: the notification is not sent, and no task_notification
//     line is published, unless the last of them leaves without claiming
//     the result (its call was cancelled), which sends it then. So a
//     watcher that sees the end must claim it before it leaves.
//
// The spawn core (internal/subagent) owns a Desk and finds runs and
// records for it (Finder); the profiles read through Reading.
//
//	deliver.go  Desk, State, Notice: who delivers an end, and the watchers
//	reading.go  Reading: the one read sequence of every reader tool
package deliver
