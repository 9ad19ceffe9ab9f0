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
// the tools that read results one sequence: Read, then deliver.Reading's
// Await and Claim), stops it (Stop), lists a tree's tasks (List) and sends
// it messages (Send, Message). The profiles — the tool surfaces of DESIGN
// §12 — are packages built on those exported calls alone (api.go lists
// them): they see a run through RunInfo and Running, never liveTask's
// fields or the service's locks, and the compiler keeps them to it. The
// runtime picks one (profiles) and hands it to New (Config.Profile); the
// Service offers its tools (Profile.Tools) to the main agent and to every
// child that may spawn.
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
//	forkcmd/          `context: fork` commands and skills (S-F2), the TUI's @name: clients of Spawn
//	agentresult/      a finished child as the Agent tool's (and a Skill fork's) result
//	stop/             the front ends' stops: a run and its descendants, or a whole tree
//
// The core's files:
//
//	service.go        Config, Service, Caller; Tools offers the profile's tools; a child's loop
//	                  (its prompts: internal/childprompt)
//	profile.go        Profile, the interface a tool surface implements; Teams, what the core
//	                  asks the profile that keeps agent teams
//	api.go            the calls profiles use beside those below: Config, Depth, MaySpawn,
//	                  Running, TreeRuns, Send, Read, the Outcome's accessors, CallerTool; the
//	                  registry's Group, Run and RunInfo under the names the runtime uses
//	spawn.go          the spawn path: route (routing/), check, prepare (run: a child ready to
//	                  start), session, pool, launch; its record (records/); what a child gets
//	                  (place, model, rules, tools): internal/spawnpolicy
//	hooks.go          what a child starts with beside its place, model, rules and tools: its hooks,
//	                  first message and memory (childsetup/)
//	foreground.go     the foreground wait and the move to the background (S-L2)
//	execute.go        a run to its end: conversation, heartbeat (internal/heartbeat), finish (S-L6)
//	teammates.go      what a teammate's run asks of the profile's teams: its span, idle hooks, notice,
//	                  the gate on its calls (plan approval), the roster front ends show
//	livetask.go       liveTask: a runs.Live and what only its execution here keeps
//	tasks.go          find, send, List, Stop; the run-tree check (InTree); the Desk's Finder
//	message.go        Message: a message to an agent by name or id (routing.Addressee), or its
//	                  resumption
//	runlist.go        what front ends need beside the group's run list: the calls stop/ makes,
//	                  SendMessage, Cleanup
//	allow.go          allowAgents (S-P1): which agents a requester may name (routing/)
//	dispatch.go       background runs carried between nodes (store.dispatch: any): launched
//	                  elsewhere, or run here for another node (RunDispatched)
//	reattach.go       following again the remote runs a resumed session started elsewhere
//	                  (claimed by remoteagent/)
//	limits.go         children per agent (counted in runtable/), foreground places (internal/lane)
//	progress.go       progress summaries of background runs, through internal/progress
//	archive.go        archiving finished child sessions (S-S3), through internal/archive
//	worktree.go       worktree isolation (S-W1; the worktree itself: childsetup/)
//	shells.go         each caller's background shells (shell/), tracked as the core's runs
//	fork.go           the Agent-tool fork (S-F1); its messages and tools: internal/fork
//	frame.go          escaping and framing a child's text (prompt's, under the core's names)
//
// The packages it hands parts of its work to, which never import it:
//
//	runs/             a live run (Info, Live, Phase: its output, figures and end) and the Group
//	                  of one run tree, with the run list front ends show (Run)
//	childsetup/       a child's hooks (the runtime's, then its definition's own where they may run),
//	                  its first message (initialPrompt, task, preloaded skills), its memory prompt,
//	                  its worktree (S-W1: created, then kept or removed)
//	routing/          which agent a spawn runs (subagent_type, a session to continue, a remote
//	                  one) and which agents a caller's tool lists and may name (S-A2, S-P1)
//	runtable/         the runs in progress in this process and the reservations of spawns in
//	                  flight (a name, a session, a child's place), under one lock
//	records/          a child's session and task records, written together where one store
//	                  holds both (and its inbox opened with them on PostgreSQL)
//	deliver/          a result reaches the model once (S-N1): who delivers, what wins; Reading,
//	                  the one read sequence of every reader tool
//	notify/           a run's task_* events and its <task-notification> (prompts/)
//	shell/            background shells: Bash run_in_background as local_bash tasks
//	standin/          the stand-in of a run dispatched to another node, following its record
//	remoteagent/      a remote agent's questions, status lines and task id (S-W2)
//	taskout/          a task's output file, who may read it, and its text
//	pending/          what reaches an agent while its background runs go on (S-Q2)
//	internal/mailbox  messages and stops for runs in other processes sharing the store (S-X2)
//	internal/crossnode  the record protocol of runs carried between nodes
//	internal/lane     the background lane (S-C2)
//	internal/announce the announce step (S-N2)
//	internal/shelltask  a background shell's bounded output file, what its end means, its
//	                  reader's filter
package subagent
