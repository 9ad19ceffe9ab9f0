// Package subagent lets an agent delegate: it is the spawn core beneath
// the spawn tools — Claude Code's Agent (alias Task), OpenCode's task, the
// harness's and the gateway's tools, each a profile package below this one
// — and runs the child they start in a child session with its own prompt,
// tools, model, permission mode and limits, every message of which is
// published live, tagged with the id of the tool call that started it.
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
// The core spawns a run (Spawn), delivers its end once (notice, and for
// the tools that read results one sequence: Read, Await, Claim), stops it
// (Stop), lists a tree's tasks (List) and sends it messages (Send,
// Message). The profiles — the tool surfaces of DESIGN §12 — are packages
// built on those exported calls alone (api.go lists them): they see a run
// through RunInfo and Running, never liveTask's fields or the service's
// locks, and the compiler keeps them to it. The runtime picks one
// (profiles) and hands it to New (Config.Profile); the Service offers its
// tools (Profile.Tools) to the main agent and to every child that may
// spawn.
//
//	claude/           Agent (alias Task; its input in agent_input.go), SendMessage, TaskOutput,
//	                  TaskStop, TaskList (tasks.go), agent teams (team.go, team_plan.go,
//	                  roster.go, team_view.go), coordinator mode
//	opencode/         task
//	harness/          agent_spawn, agent_send, agent_list (harness.go); task_output,
//	                  task_cancel, task_list, wait_async_results (tasks.go)
//	gateway/          sessions_spawn, agents_list
//	profiles/         picks the profile subagents.surface names
//	prompt/           templates, one-line text and the framing of a child's text (Escape,
//	                  Untrusted), shared by the core, the profiles and internal/shelltask
//
// The core's files, and the packages it hands parts of its work to:
//
//	service.go        Config, Service, Caller; Tools offers the profile's tools; a child's loop
//	                  (its prompts: internal/childprompt)
//	profile.go        Profile, the interface a tool surface implements; Teams, what the core
//	                  asks the profile that keeps agent teams
//	api.go            the calls profiles use beside those below: Config, Depth, MaySpawn,
//	                  Running, TreeRuns, Send, the Outcome's and Reading's accessors, CallerTool
//	spawn.go          the spawn path: route, check, prepare (run: a child ready to start), session, pool, launch;
//	                  what a child gets (place, model, rules, tools): internal/spawnpolicy
//	ecosystem.go      a child's memory prompt and its first message (skills, memory); its grants: internal/spawnpolicy
//	hooks.go          a child's hooks: the runtime's, then its definition's own (which may run: internal/spawnpolicy)
//	joint.go          a child's session and task records written together where one store holds both
//	foreground.go     the foreground wait and the move to the background (S-L2)
//	execute.go        a run to its end: conversation, heartbeat (internal/heartbeat), finish (S-L6)
//	teammates.go      what a teammate's run asks of the profile's teams: its span, idle hooks, notice,
//	                  the gate on its calls (plan approval), the roster front ends show
//	livetask.go       liveTask, a run in this process, and RunInfo, what profiles read of it
//	output.go         a run's output: the plain-text log readers get (internal/runlog)
//	deliver.go        a result reaches the model once (S-N1): who delivers, what wins;
//	                  Reading, the one read sequence of every reader tool
//	tasks.go          find, await, send, List, Stop; the run-tree check (InTree)
//	message.go        Message: a message to an agent by name or id, or its resumption
//	agentresult.go    AgentResult: a finished child as the Agent tool's (and a Skill fork's) result
//	allow.go          allowAgents (S-P1): which agents a requester may name
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
//	frame.go          escaping and framing a child's text (prompt's, under the core's names)
//	prompts.go        the core's model-facing text in prompts/
package subagent
