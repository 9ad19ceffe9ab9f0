// Package subagent lets an agent delegate: it provides the spawn tools —
// Claude Code's Agent (alias Task), OpenCode's task — and runs the child they
// start in a child session with its own prompt, tools, model, permission
// mode and limits, every message of which is published live, tagged with the
// id of the tool call that started it.
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
package subagent
