// Package subagent lets an agent delegate: it provides the spawn tools —
// Claude Code's Agent (alias Task), OpenCode's task, the harness's and the
// gateway's tools — and runs the child they start in a child session with
// its own prompt, tools, model, permission mode and limits, every message
// of which is published live, tagged with the id of the tool call that
// started it.
//
// Three permission layers meet here (DESIGN §5): who may be spawned
// (permissions.task rules and Agent(name) rules), which tools the child gets
// (its definition, the global deny rules and the subagent tool policy;
// leaves never get a spawn tool), and the mode the child runs in (its
// definition's, else acceptEdits, capped by the parent's).
//
// Subagents are leaves unless subagents.maxSpawnDepth allows more (hard cap
// 3). Several spawn calls in one assistant message run at the same time:
// the spawn tools are concurrency-safe and the loop runs such calls together.
//
// # One core, four profiles
//
// The core spawns a run (spawn), delivers its end once (notice, and for the
// tools that read results one sequence: read, await, claim), stops it
// (Stop), lists a tree's tasks
// (list) and sends it messages (send). The profiles — the tool surfaces of
// DESIGN §12 — are built on those calls alone; they read a run through
// liveTask.about and liveTask.end, never through its fields or the
// service's locks. Where things live:
//
//	service.go        Config, Service, Caller; the tools of each profile; a child's loop (its prompts: internal/childprompt)
//	spawn.go          the spawn path: route, check, prepare (run: a child ready to start), session, pool, launch;
//	                  what a child gets (place, model, rules, tools): internal/spawnpolicy
//	ecosystem.go      a child's memory prompt and its first message (skills, memory); its grants: internal/spawnpolicy
//	hooks.go          a child's hooks: the runtime's, then its definition's own (which may run: internal/spawnpolicy)
//	joint.go          a child's session and task records written together where one store holds both
//	foreground.go     the foreground wait and the move to the background (S-L2)
//	execute.go        a run to its end: conversation, heartbeat (internal/heartbeat), finish (S-L6)
//	livetask.go       liveTask, a run in this process, and what profiles read of it
//	output.go         a run's output: the plain-text log readers get (internal/runlog)
//	deliver.go        a result reaches the model once (S-N1): who delivers, what wins;
//	                  reading, the one read sequence of every reader tool
//	tasks.go          find, await, send, list, stop; the run-tree check
//	events.go         the task_* events
//	group.go          Group: the runs of one run tree
//	runlist.go        Run: the runs of a conversation as front ends list, stop and message them
//	dispatch.go       background runs carried between nodes (store.dispatch: any); the record protocol: internal/crossnode
//	internal/mailbox  messages and stops for runs in other processes sharing the store (S-X2)
//	reattach.go       following again the remote runs a resumed session started elsewhere
//	internal/lane     the background lane (S-C2)
//	limits.go         children per agent, foreground places (internal/lane)
//	progress.go       progress summaries of background runs, through internal/progress
//	internal/announce the announce step (S-N2)
//	archive.go        archiving finished child sessions (S-S3), through internal/archive
//	worktree.go       worktree isolation (S-W1)
//	shell.go          background shells: Bash run_in_background as local_bash tasks
//	internal/shelltask  a background shell's bounded output file, what its end means, its reader's filter
//	fork.go           the Agent-tool fork (S-F1); its messages and tools: internal/fork
//	fork_command.go   `context: fork` slash commands (S-F2)
//	frame.go          escaping and framing a child's text (internal/frame)
//	prompts.go        the model-facing text in prompts/, and text helpers
//	schemas.go        the input schemas of the spawn and task tools (schemas/)
//	claude_agent.go   claude profile: Agent
//	claude_tasks.go   claude profile: SendMessage, TaskOutput, TaskStop, TaskList
//	team.go           claude profile: agent teams — teammates, the team's SendMessage, its task list, ListAgents
//	coordinator.go    claude profile: coordinator mode's tools and prompt
//	opencode_task.go  opencode profile: task
//	harness.go        harness profile: replies, agent_spawn, agent_send, agent_list
//	harness_tasks.go  harness profile: task_output, task_cancel, task_list, wait_async_results
//	gateway.go        gateway profile: sessions_spawn, agents_list
package subagent
