package screen

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// TestPager: a text is read from its end, scrolls, reloads with "r", is
// cleaned of escape sequences, and Esc pops it.
func TestPager(t *testing.T) {
	var lines []string
	for i := range 30 {
		lines = append(lines, fmt.Sprintf("line %02d", i))
	}
	reads := 0
	p := NewPager("Task output", strings.Join(lines, "\n")+"\n\x1b[2Jescaped").Reloads(t.Context(), func(context.Context) (string, error) {
		reads++
		return "RELOADED", nil
	})
	view := func() string { return ansi.Strip(p.View(40, 8)) }
	if v := view(); !strings.Contains(v, "Task output") || !strings.Contains(v, "escaped") || strings.Contains(v, "line 00") {
		t.Errorf("the pager does not show the text's end, cleaned:\n%q", v)
	}
	p.Update(tea.KeyPressMsg{Code: 'g', Text: "g"})
	if v := view(); !strings.Contains(v, "line 00") {
		t.Errorf("g did not go to the start:\n%s", v)
	}
	_, cmd := p.Update(tea.KeyPressMsg{Code: 'r', Text: "r"})
	p.Update(cmd())
	if v := view(); reads != 1 || !strings.Contains(v, "RELOADED") {
		t.Errorf("r: %d reads, screen:\n%s", reads, v)
	}
	if _, cmd := p.Update(tea.KeyPressMsg{Code: tea.KeyEscape}); cmd == nil {
		t.Fatal("Esc does nothing")
	} else if _, ok := cmd().(PopMsg); !ok {
		t.Error("Esc does not pop the pager")
	}
}
