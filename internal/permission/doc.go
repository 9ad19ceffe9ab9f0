// Package permission decides whether one tool call may run: the execution
// layer of cadre's permissions (DESIGN.md S-P3).
//
// A Policy combines a Mode with Claude Code style rules ("Bash",
// "Bash(npm run test:*)", "Read(./src/**)", "Edit(docs/**)",
// "mcp__server__tool") kept in allow, ask and deny lists. Permit evaluates,
// in this order:
//
//  1. deny rules: any match denies, whatever the mode;
//  2. plan mode: anything but a read tool is denied (plan mode is read-only,
//     even when an allow rule names the tool);
//  3. bypassPermissions mode: everything left is allowed; ask rules are
//     skipped too, since nobody is meant to be asked in that mode;
//  4. ask rules: a match asks the Asker;
//  5. allow rules: a match allows;
//  6. the mode: reads inside the workspace are allowed in every mode,
//     edits inside the workspace in acceptEdits; everything else asks.
//
// An ask with no Asker (a headless run) is a denial whose text tells the
// model why and what the user could change. A denial is a *Denied error,
// written for the model: the loop hands its text back as an is_error
// tool_result.
//
// Specifiers match the call's target (tool.Targeted), by the tool's access:
//
//   - exec tools (Bash): "cmd:*" and "cmd *" are word-boundary prefixes
//     ("git diff:*" matches "git diff" and "git diff HEAD", not "git diffx"),
//     anything else must match the whole command, "*" being a wildcard.
//     The command is read by package shellcmd, parsed as bash parses it
//     (mvdan.cc/sh), into its simple commands, wherever they sit (&&, |,
//     subshells, loops, functions, substitutions). Allow rules approve a command when each simple command,
//     as written (its words one space apart, redirections left out), matches
//     one of them; never one holding $(…), `…`, <(…), >(…) or arithmetic.
//     Deny and ask rules apply when they match any form of any simple command:
//     as written, unquoted, without leading VAR=value assignments, with the
//     executable's directory dropped (/bin/rm is rm), through the wrappers
//     command, builtin, exec, env, nice, nohup, timeout, xargs, time, stdbuf,
//     setsid, sudo, doas and busybox (their options skipped), and inside the
//     scripts of sh|bash|zsh|dash|… -c, eval and trap, re-parsed (bounded).
//     What cannot be read before it runs (eval, trap, alias, a command name
//     from $x or $(…), sh -c "$x", a shell reading its input, a parse error,
//     more than the bounds on size and nesting) is never approved by an
//     allow rule, not even a bare Bash, and asks when any Bash deny or ask
//     rule exists, whatever the mode. A redirection that writes a file
//     (>, >>, >|, &>, N>, >&file, <>) is decided as a Write of its target
//     (Edit and Write rules, protected paths, the mode); an allow rule for
//     the command never approves it. /dev/null, the standard streams and
//     descriptor duplication are not file writes; a target that cannot be
//     read (a variable, a glob, a relative name after cd) needs approval.
//     These are guard rails, not a sandbox: a program may write or run
//     anything it likes (python -c, make, find -exec, a script's content).
//   - file tools (Read, Grep, Glob, LS, Edit, Write): gitignore-style
//     patterns matched with doublestar against the absolute, cleaned target:
//     "//abs/path" is absolute, "~/x" is under Home, and "/x", "./x", "x/y"
//     and "." under the project (Project, the main session's workspace; a
//     worktree child's checkout too) whatever the caller's cwd, a bare
//     name with no slash ("*.env") matching at any depth under it. A
//     pattern that names a directory covers everything below it. Read(…)
//     rules apply to every read tool and Edit(…) rules to every edit tool;
//     so do the bare "Read" and "Edit" rules (but Removed only removes the
//     tool literally named). Symbolic links are resolved (for a path that
//     does not exist yet, its nearest existing ancestor, dangling links
//     followed): deny and ask rules match the path as given or where it
//     leads, allow rules and "inside the workspace" only where it leads,
//     against roots resolved the same way. ReadFilter keeps what deny and
//     ask rules name out of the results of a permitted search or listing.
//
// Edits of permission-bearing files ask between steps 3 and 4 above, so
// that only bypassPermissions or the user's answer lets them through,
// never acceptEdits or an allow rule: a path component .git, .cadre, .claude or .opencode, or a base name
// .mcp.json, judged below the deepest workspace or project root holding
// the path, and anything in ConfigDirs or Home's .cadre and .claude. With
// no Asker that is a denial naming the protection.
//
//   - other tools: the specifier must equal the target, "*" being a
//     wildcard. Agent(name) and Task(name) are the same rule (Task is the
//     tool's old name); for spawns they are read by PermitSpawn (below).
//
// Tool names in rules may use "*" ("mcp__github__*"), and "mcp__server"
// alone names every tool of that MCP server, as in Claude Code. A specifier
// of "*" is the same as no specifier. Deny and ask rules name tools ignoring
// case (a "bash" deny holds), whoever wrote them; allow rules match exactly.
//
// # Spawning subagents
//
// Which agents a session may spawn (DESIGN.md S-P1) is decided by
// PermitSpawn from two layers of rules:
//
//   - task rules (TaskRules), OpenCode's permission.task: an ordered
//     object of agent-name pattern to allow, ask or deny. The settings'
//     permissions.task (Policy.Task) and the calling agent's own
//     definition rules are each evaluated on their own — the last
//     matching rule wins, and no match allows — and the stricter of the
//     two holds: an agent file may narrow the settings, never widen a
//     deny or turn an ask into an allow. Patterns are OpenCode wildcards (WildcardMatch): "*"
//     is any run of characters but "/", "**" any run, "?" one character.
//     Agent names are compared ignoring case, since cadre folds agent ids.
//   - Claude Code rules in the allow, ask and deny lists: "Agent" or
//     "Task" alone (every agent), "Agent(reviewer)" (that agent, ignoring
//     case) and "Agent(review-*)" ("*" any run).
//
// A deny from either layer denies, in every mode; then an ask from either
// asks, except in bypassPermissions; else the spawn is allowed. The
// denial names the deciding rule and says the agent may not be spawned;
// it never offers another agent. SpawnVisible tells whether an agent is
// listed in the Agent tool's description (not when denied outright), and
// SpawnRemoved whether the Agent tool leaves the pool: a bare Agent deny,
// or task rules (the settings' or the agent's) whose last rule is
// "*": "deny".
//
// ChildMode gives a subagent's permission mode: its definition's, else
// acceptEdits; never bypassPermissions under a parent without it, and
// always plan under a plan parent.
package permission
