package screen

import tea "charm.land/bubbletea/v2"

// Screen is a full-screen view pushed over the conversation, such as the
// session tree. While it is on top it receives every message the model
// gets — keys, window sizes, conversation events, ticks — and its View
// fills the window; the conversation underneath keeps taking events, so
// nothing is missed when the screen is popped.
type Screen interface {
	Update(msg tea.Msg) (Screen, tea.Cmd)
	// View renders the screen for a window of width×height cells.
	View(width, height int) string
}

// Closer is a screen that started something (a watch) to end and wait
// for when the program ends with it still open.
type Closer interface{ Close() }

// PushMsg puts a screen on top; PopMsg removes the top one. The model
// that holds the stack takes them (internal/tui).
type (
	PushMsg struct{ Screen Screen }
	PopMsg  struct{}
)

// Push returns the command that shows s over the conversation (or over
// the screen on top, which comes back when s is popped).
func Push(s Screen) tea.Cmd {
	return func() tea.Msg { return PushMsg{s} }
}

// Pop is the command that removes the screen on top, going back to the
// one below it, or to the conversation.
func Pop() tea.Msg { return PopMsg{} }
