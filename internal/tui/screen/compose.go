package screen

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// Compose is a one-line message typed on a screen to the agent it shows
// (a subagent on the session tree, a teammate on the team screen), and
// the outcome of the last one sent.
type Compose struct {
	// Note is the outcome of the last message sent, or why none could be.
	Note   string
	typing bool
	input  textinput.Model
}

// NewCompose returns a Compose whose empty line shows placeholder.
func NewCompose(placeholder string) Compose {
	in := textinput.New()
	in.Prompt = "message › "
	in.Placeholder = placeholder
	st := in.Styles()
	st.Cursor.Blink = false // an idle screen must not wake the program
	in.SetStyles(st)
	return Compose{input: in}
}

// Typing reports whether a message is being typed.
func (c *Compose) Typing() bool { return c.typing }

// Begin starts a new message.
func (c *Compose) Begin() {
	c.typing, c.Note = true, ""
	c.input.Reset()
	c.input.Focus()
}

// Reset ends any message being typed and forgets the last outcome.
func (c *Compose) Reset() {
	c.typing, c.Note = false, ""
	c.input.Blur()
}

// Update takes a key or a paste while a message is typed. Enter ends it
// with its text (trimmed; "" for an empty line) and done; Esc ends it
// with "" and done; anything else edits it.
func (c *Compose) Update(msg tea.Msg) (text string, done bool, cmd tea.Cmd) {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "esc":
			c.typing = false
			c.input.Blur()
			return "", true, nil
		case "enter":
			text = strings.TrimSpace(c.input.Value())
			c.typing = false
			c.input.Blur()
			return text, true, nil
		}
	}
	c.input, cmd = c.input.Update(msg)
	return "", false, cmd
}

// Lines are the note, if any, and the message being typed, if any, for a
// footer width cells wide.
func (c *Compose) Lines(width int) []string {
	var lines []string
	if c.Note != "" {
		lines = append(lines, ansi.Truncate(c.Note, width, "…"))
	}
	if c.typing {
		c.input.SetWidth(max(width-12, 10))
		lines = append(lines, c.input.View())
	}
	return lines
}
