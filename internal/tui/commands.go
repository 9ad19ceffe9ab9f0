package tui

import (
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// builtinCommands are the TUI's own commands with their help.
var builtinCommands = [][2]string{
	{"/help", "show the keys and commands"},
	{"/exit", "quit cadre"},
}

// command runs an input line starting with "/". The TUI's own commands
// come first; the project's slash commands and skills (the init event's)
// go to the conversation, which expands them as in -p mode.
func (m *Model) command(line string) tea.Cmd {
	name, _, _ := strings.Cut(strings.TrimPrefix(line, "/"), " ")
	switch name {
	case "help":
		m.Info(m.help())
		return nil
	case "exit", "quit":
		return tea.Quit
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
	for _, c := range builtinCommands {
		out = append(out, c[0])
	}
	for _, c := range m.commands {
		out = append(out, "/"+c)
	}
	return out
}

// help is the /help text.
func (m *Model) help() string {
	var b strings.Builder
	b.WriteString("Keys: Enter sends · Shift+Enter, Alt+Enter or Ctrl+J new line · Up/Down history · Esc interrupts the turn · ")
	b.WriteString("Ctrl+C twice quits · Shift+Tab cycles the permission mode · Ctrl+B moves running subagents to the background · ")
	b.WriteString("PgUp/PgDn scroll · @name text runs that subagent (Tab completes)\nCommands:")
	for _, c := range builtinCommands {
		fmt.Fprintf(&b, "\n  %-10s %s", c[0], c[1])
	}
	for _, c := range m.commands {
		fmt.Fprintf(&b, "\n  /%-9s the project's command or skill", c)
	}
	return b.String()
}
