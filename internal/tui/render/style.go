package render

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
)

// The styles the interface's screens share.
var (
	User    = lipgloss.NewStyle().Bold(true)
	Dim     = lipgloss.NewStyle().Faint(true)
	Err     = lipgloss.NewStyle().Foreground(lipgloss.Red)
	Tool    = lipgloss.NewStyle().Foreground(lipgloss.Cyan)
	OK      = lipgloss.NewStyle().Foreground(lipgloss.Green)
	Warn    = lipgloss.NewStyle().Foreground(lipgloss.Yellow)
	Queued  = lipgloss.NewStyle().Faint(true).Italic(true)
	Heading = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Magenta)
)

// spinner frames, one per tick while something runs.
var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Spinner is the spinner's frame for tick n.
func Spinner(n int) string { return spinner[n%len(spinner)] }

// agentColors are the colors an agent file may name, as Claude Code's.
var agentColors = map[string]color.Color{
	"red": lipgloss.Red, "green": lipgloss.Green, "yellow": lipgloss.Yellow, "blue": lipgloss.Blue,
	"purple": lipgloss.Magenta, "cyan": lipgloss.Cyan, "orange": lipgloss.Color("208"), "pink": lipgloss.Color("205"),
}

// AgentStyle shows an agent's name in its file's color: a named one, or
// OpenCode's #RRGGBB; the tool color otherwise.
func AgentStyle(c string) lipgloss.Style {
	if col, ok := agentColors[strings.ToLower(c)]; ok {
		return lipgloss.NewStyle().Foreground(col).Bold(true)
	}
	if len(c) == 7 && c[0] == '#' {
		return lipgloss.NewStyle().Foreground(lipgloss.Color(c)).Bold(true)
	}
	return Tool
}
