package tui

import tea "charm.land/bubbletea/v2"

// Screen is a full-screen view pushed over the conversation, such as the
// session tree. While it is on top it receives every message the model
// gets — keys, window sizes, conversation events (EventMsg), ticks — and
// its View fills the window; the conversation underneath keeps taking
// events, so nothing is missed when the screen is popped.
type Screen interface {
	Update(msg tea.Msg) (Screen, tea.Cmd)
	// View renders the screen for a window of width×height cells.
	View(width, height int) string
}

// pushScreenMsg puts a screen on top; popScreenMsg removes the top one.
type (
	pushScreenMsg struct{ s Screen }
	popScreenMsg  struct{}
)

// PushScreen returns the command that shows s over the conversation (or
// over the screen on top, which comes back when s is popped).
func PushScreen(s Screen) tea.Cmd {
	return func() tea.Msg { return pushScreenMsg{s} }
}

// PopScreen returns the command that removes the screen on top, going
// back to the one below it, or to the conversation.
func PopScreen() tea.Msg { return popScreenMsg{} }
