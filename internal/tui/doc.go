// Package tui is cadre's interactive terminal interface (DESIGN §16): a
// Bubble Tea v2 program over a live cadre.Conversation. It is one more
// consumer of the conversation's events and one more producer of its
// queue entries; what any front end needs (the subagent runs of a tree,
// the approval queue, the session's figures, the permission-mode cycle,
// the agents "@" may name) comes from the runtime, never from here.
//
// The screen is a transcript viewport above a fixed input: the main
// agent's answer streams into the transcript, rendered as Markdown; tool
// calls show as one line each with their results folded; each subagent
// run shows as one live line under the Agent call that started it,
// collapsed to a summary when it ends (running runs first, as many lines
// as the free rows hold while any runs, eight once all ended, the rest
// summed up); a background run of the main agent that ends gets a line of
// its own; background runs whose lines have scrolled away stay
// in a panel above the input; a status line shows the model, the
// permission mode, the tree's tokens and cost as they grow
// (cadre.Conversation.Stats) and the background runs. Messages typed while
// a turn runs show as queued until their turn starts. Permission requests
// from any agent wait in a cadre.Approvals queue and are asked one at a
// time in place of the input. The model schedules nothing while nothing
// runs (its spinner ticks only while something does); what an idle screen
// costs is Bubble Tea's renderer waking at its frame rate (run.go).
//
// Run drives the program: it pumps the conversation's events and the
// approval queue into it, and when it quits stops the conversation (or
// closes it, when nothing runs). Config.Reopen lets /clear and /resume ask
// the caller (internal/cli) for another conversation in a new run.
//
// Keys (input.go; the commands add theirs, such as Ctrl+T): Enter sends; Shift+Enter, Alt+Enter or Ctrl+J add a
// line; Up/Down on the first/last line browse the history; Esc interrupts
// the turn (or denies the approval shown); Ctrl+C interrupts the turn,
// clears typed text, else twice within quitWindow quits; Shift+Tab
// cycles the permission mode (cadre.NextPermissionMode); Ctrl+B moves the
// running foreground subagents to the background; Ctrl+O unfolds tool
// results; PgUp/PgDn and the mouse wheel scroll; "@" completes agent
// names and workspace paths (Tab or Enter), and "@path" attaches the file
// (internal/mention confines it to the workspace), and "@teammate text"
// messages a teammate of the main agent's team (team.go; /team shows the
// team); "!command" runs
// through cadre.Conversation.Shell (the Bash tool's gates); "?" on an
// empty prompt opens the shortcut sheet. An approval prompt takes y/1,
// a/2, n/3 (then a reason) and Esc.
//
// The view is drawn on the alternate screen; when Run returns, the
// transcript is printed to the terminal so that it stays in its
// scrollback.
//
// Extension points:
//
//   - commands.go: every input line starting with "/" goes to
//     Model.command, which returns the tea.Cmd to run (nil for none). It
//     prints into the transcript with Model.Info and Model.Error, talks to
//     the conversation through Model.Conversation, and opens full-screen
//     views with screen.Push.
//   - internal/tui/screen: a Screen is a full-screen view pushed over the
//     conversation (the session tree, a task's output, the team). While
//     on top it gets every key and the whole window, and every
//     conversation event too (the transcript below keeps following them);
//     it ends itself with screen.Pop.
//
// Sub-packages: render (styles, Markdown, folded results, diffs, tables),
// screen (the screen stack and the pager), sessiontree (the session tree
// screen), teamview (the team's roster and task board).
package tui
