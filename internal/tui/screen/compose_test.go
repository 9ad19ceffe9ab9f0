package screen

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// A message typed on a screen: a paste and keys edit it, Enter ends it
// with its trimmed text, Esc ends it with none; the note and the line
// being typed are the footer's.
func TestCompose(t *testing.T) {
	for _, tc := range []struct {
		name     string
		end      tea.KeyPressMsg
		wantText string
	}{
		{"enter sends", tea.KeyPressMsg{Code: tea.KeyEnter}, "hello there"},
		{"esc drops", tea.KeyPressMsg{Code: tea.KeyEscape}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCompose("say something")
			c.Note = "an earlier outcome"
			c.Begin()
			if !c.Typing() || c.Note != "" {
				t.Fatalf("after Begin: typing %v, note %q", c.Typing(), c.Note)
			}
			if _, done, _ := c.Update(tea.PasteMsg{Content: "  hello there "}); done {
				t.Fatal("a paste ended the message")
			}
			if lines := c.Lines(40); len(lines) != 1 || !strings.Contains(lines[0], "hello there") {
				t.Errorf("while typing, lines %q", lines)
			}
			text, done, _ := c.Update(tc.end)
			if !done || text != tc.wantText || c.Typing() {
				t.Errorf("ended: text %q, done %v, typing %v; want %q", text, done, c.Typing(), tc.wantText)
			}
			c.Note = "sent"
			if lines := c.Lines(40); len(lines) != 1 || lines[0] != "sent" {
				t.Errorf("after it, lines %q; want the note alone", lines)
			}
		})
	}
}
