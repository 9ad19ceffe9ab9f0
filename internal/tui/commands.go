package tui

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/render"
)

// The slash commands (issue 11 item 5). Each one is a thin call into the
// runtime: the logic lives in package cadre (subagents.go, session_tree.go,
// agents_create.go, conversation_compact.go), shared with every front end.

// Runtime is what the commands need of the runtime; *cadre.Runtime is
// one.
type Runtime interface {
	Agents() []cadre.AgentEntry
	Agent(name string) (cadre.Agent, bool)
	CreateAgent(ctx context.Context, a cadre.NewAgent) (cadre.AgentEntry, error)
	Tasks(ctx context.Context, rootSessionID string, limit int) ([]cadre.Task, error)
	TaskOutput(ctx context.Context, id string) (string, error)
	StopTask(ctx context.Context, id string) (string, error)
	Sessions(ctx context.Context, cwd string, limit int) ([]cadre.Session, error)
	SessionTree(ctx context.Context, id string) (cadre.SessionTree, error)
	WatchSession(ctx context.Context, id string) iter.Seq2[cadre.Event, error]
	Cwd() string
}

// Steering is what the commands need of the conversation beyond
// Conversation; *cadre.Conversation has it.
type Steering interface {
	SessionID() string
	Subagents(ctx context.Context) ([]cadre.SubagentRun, error)
	FindSubagent(ctx context.Context, target string) (cadre.SubagentRun, error)
	StopSubagent(ctx context.Context, target string) ([]string, error)
	Abort(ctx context.Context) ([]string, error)
	SendSubagent(ctx context.Context, target, text string) (string, error)
	SubagentInfo(ctx context.Context, target string) (cadre.SubagentDetails, error)
	SubagentLog(ctx context.Context, target string, limit int, tools bool) (cadre.SubagentRun, []cadre.LogMessage, error)
	Compact(ctx context.Context) error
	SetModel(name string) error
	Model() string
}

// The runtime's own types are what the commands run on.
var (
	_ Runtime  = (*cadre.Runtime)(nil)
	_ Steering = (*cadre.Conversation)(nil)
)

// builtin is one of the TUI's own commands.
type builtin struct {
	name, args, help string
	// run runs it with the text after the name; it returns the command to
	// run, if any.
	run func(m *Model, args string) tea.Cmd
}

// builtins are the TUI's own commands, in the order /help lists them.
// (A function, not a variable: the commands refer back to the list.)
func builtins() []builtin {
	return []builtin{
		{"agents", "[show NAME | create]", "list the subagent definitions with source and validity; show one; create one in .cadre/agents", (*Model).agentsCommand},
		{"subagents", "list | stop <#|id|all> | log <#|id> [limit] [tools] | info <#|id> | send <#|id> <message>", "inspect and steer this conversation's subagents", (*Model).subagentsCommand},
		{"stop", "", "stop the turn and every running subagent", (*Model).stopCommand},
		{"tasks", "[output <#|id> | stop <#|id>]", "background tasks: status, progress, elapsed, cost", (*Model).tasksCommand},
		{"team", "", "the team: roster and task board, live; open a teammate's transcript, message it", (*Model).teamCommand},
		{"tree", "[#|id]", "the session tree: open a subagent's session (Ctrl+T)", (*Model).treeCommand},
		{"model", "[NAME]", "show or change the main agent's model", (*Model).modelCommand},
		{"compact", "", "summarise the older turns now", (*Model).compactCommand},
		{"clear", "", "start a fresh session", (*Model).clearCommand},
		{"resume", "", "pick an earlier session of this directory to reopen", (*Model).resumeCommand},
		{"help", "", "show the keys and commands", func(m *Model, _ string) tea.Cmd { m.Info(m.help()); return nil }},
		{"exit", "", "quit cadre", func(*Model, string) tea.Cmd { return tea.Quit }},
	}
}

// command runs an input line starting with "/". The TUI's own commands
// come first; the project's slash commands and skills (the init event's)
// go to the conversation, which expands them as in -p mode.
func (m *Model) command(line string) tea.Cmd {
	name, args, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	args = strings.TrimSpace(args)
	if name == "quit" {
		name = "exit"
	}
	for _, b := range builtins() {
		if b.name == name {
			return b.run(m, args)
		}
	}
	if slices.Contains(m.commands, name) {
		m.send(line)
		return nil
	}
	m.Error(fmt.Sprintf("unknown command /%s — these exist: %s", name, strings.Join(m.commandNames(), ", ")))
	return nil
}

// commandNames are every command the input takes.
func (m *Model) commandNames() []string {
	var out []string
	for _, b := range builtins() {
		out = append(out, "/"+b.name)
	}
	for _, c := range m.commands {
		out = append(out, "/"+c)
	}
	return out
}

// commandCompletions are the completions of a "/" line being typed: the
// command names while the name is typed; then, for commands that take
// one, the subcommand, the agent names or the subagents' numbers.
func (m *Model) commandCompletions(v string) []string {
	name, rest, spaced := strings.Cut(strings.TrimPrefix(v, "/"), " ")
	if !spaced {
		var out []string
		for _, c := range m.commandNames() {
			if strings.HasPrefix(c, "/"+name) {
				out = append(out, c)
			}
		}
		return out
	}
	words := strings.Fields(rest)
	typing := ""
	if !strings.HasSuffix(rest, " ") && len(words) > 0 {
		typing, words = words[len(words)-1], words[:len(words)-1]
	}
	var options []string
	switch {
	case name == "agents" && len(words) == 0:
		options = []string{"show", "create"}
	case name == "agents" && len(words) == 1 && words[0] == "show":
		for _, e := range m.runtimeAgents() {
			options = append(options, e.Agent.Name)
		}
	case name == "subagents" && len(words) == 0:
		options = []string{"list", "stop", "log", "info", "send"}
	case name == "subagents" && len(words) == 1 && words[0] != "list":
		options = m.subagentTargets()
		if words[0] == "stop" {
			options = append(options, "all")
		}
	case name == "tasks" && len(words) == 0:
		options = []string{"output", "stop"}
	case name == "tree" && len(words) == 0:
		options = m.subagentTargets()
	default:
		return nil
	}
	prefix := "/" + name + " " + strings.Join(append(words, ""), " ")
	var out []string
	for _, o := range options {
		if strings.HasPrefix(strings.ToLower(o), strings.ToLower(typing)) {
			out = append(out, prefix+o)
		}
	}
	return out
}

// subagentTargets are "#N" for each subagent of the conversation.
func (m *Model) subagentTargets() []string {
	st, ok := m.conv.(Steering)
	if !ok {
		return nil
	}
	runs, err := st.Subagents(m.ctx)
	if err != nil {
		return nil
	}
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = fmt.Sprintf("#%d", r.Index)
	}
	return out
}

// help is the /help text.
func (m *Model) help() string {
	var b strings.Builder
	b.WriteString("Keys: Enter sends · Shift+Enter, Alt+Enter or Ctrl+J new line · Up/Down history · Esc or Ctrl+C interrupts the turn · ")
	b.WriteString("Ctrl+C twice quits · Shift+Tab cycles the permission mode · Ctrl+B moves running subagents to the background · ")
	b.WriteString("Ctrl+T opens the session tree · PgUp/PgDn or the wheel scroll · @name text runs that subagent (or messages the teammate of that name) · @path attaches a file · ")
	b.WriteString("!command runs a shell command · ? on an empty prompt lists the keys · Tab completes names, paths and commands\nCommands:")
	for _, c := range builtins() {
		fmt.Fprintf(&b, "\n  /%-10s %s", c.name, c.help)
		if c.args != "" {
			fmt.Fprintf(&b, "\n  %-11s %s", "", render.Dim.Render("/"+c.name+" "+c.args))
		}
	}
	for _, c := range m.commands {
		fmt.Fprintf(&b, "\n  /%-10s the project's command or skill", c)
	}
	return b.String()
}

// commandMsg is a command's outcome, from a call that ran outside Update
// (it may wait for runs to end): lines for the transcript, or an error.
type commandMsg struct {
	info string
	err  error
	// then runs after the outcome is shown (a screen to push).
	then tea.Cmd
}

// commandDone shows a command's outcome.
func (m *Model) commandDone(msg commandMsg) tea.Cmd {
	if msg.info != "" {
		m.Info(msg.info)
	}
	if msg.err != nil {
		m.Error(msg.err.Error())
	}
	return msg.then
}

// async runs f outside Update and shows what it returns.
func (m *Model) async(f func(ctx context.Context) (string, error)) tea.Cmd {
	ctx := m.ctx
	return func() tea.Msg {
		info, err := f(ctx)
		return commandMsg{info: info, err: err}
	}
}

// steering is the conversation's Steering, or an error line saying the
// command cannot work here.
func (m *Model) steering(cmd string) (Steering, bool) {
	st, ok := m.conv.(Steering)
	if !ok {
		m.Error(cmd + " is not available: this conversation cannot be steered")
	}
	return st, ok
}

// runtime is the runtime, or an error line saying the command cannot work
// here.
func (m *Model) runtime(cmd string) (Runtime, bool) {
	if m.cfg.Runtime == nil {
		m.Error(cmd + " is not available: the TUI runs without a runtime")
		return nil, false
	}
	return m.cfg.Runtime, true
}

func (m *Model) runtimeAgents() []cadre.AgentEntry {
	if m.cfg.Runtime == nil {
		return nil
	}
	return m.cfg.Runtime.Agents()
}
