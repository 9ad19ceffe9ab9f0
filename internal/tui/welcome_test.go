package tui

import (
	"github.com/charmbracelet/x/ansi"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
)

// The first line names the workspace and the model, and follows /model
// and the init event.
func TestWelcomeLine(t *testing.T) {
	h := &harness{t: t, conv: &fakeConv{}, now: t0}
	h.m = New(t.Context(), Config{Conversation: h.conv, Model: "opus", Cwd: "/work/shop", Now: func() time.Time { return h.now }})
	h.update(tea.WindowSizeMsg{Width: 80, Height: 20})
	if first := strings.TrimRight(strings.Split(h.m.Screen(), "\n")[0], " "); first != "✻ cadre · /work/shop · opus" {
		t.Errorf("the first line is %q, want the workspace and the model", first)
	}
	h.event(cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeInit, Init: &cadre.InitInfo{Model: "anthropic:claude-opus-5"}})
	if first := strings.TrimRight(strings.Split(h.m.Screen(), "\n")[0], " "); first != "✻ cadre · /work/shop · anthropic:claude-opus-5" {
		t.Errorf("after the init event the first line is %q", first)
	}
	// A directory too long for the line gives up its beginning, not the
	// model.
	h.update(tea.WindowSizeMsg{Width: 40, Height: 20})
	first := strings.TrimRight(strings.Split(h.m.Screen(), "\n")[0], " ")
	if !strings.HasPrefix(first, "✻ cadre · …") || !strings.HasSuffix(first, "p · anthropic:claude-opus-5") || ansi.StringWidth(first) > 40 {
		t.Errorf("on a narrow screen the first line is %q (%d wide)", first, ansi.StringWidth(first))
	}
	if h.m.Transcript() != "" {
		t.Errorf("a conversation with nothing said prints %q on exit, want nothing", h.m.Transcript())
	}
}

// "?" on an empty prompt opens the shortcut sheet; any key closes it
// (and does its own work), "?" again only closes it; typed after text,
// "?" is a question mark.
func TestShortcutSheet(t *testing.T) {
	h := newHarness(t)
	h.typeText("?")
	s := h.m.Screen()
	for _, want := range []string{"ctrl+c twice", "shift+tab", "! ", "shell command", "@name"} {
		if !strings.Contains(s, want) {
			t.Errorf("the sheet lacks %q:\n%s", want, s)
		}
	}
	if h.m.input.Value() != "" {
		t.Errorf("? was typed into the prompt: %q", h.m.input.Value())
	}
	h.typeText("?")
	if strings.Contains(h.m.Screen(), "shell command") || h.m.input.Value() != "" {
		t.Fatalf("a second ? did not just close the sheet (input %q):\n%s", h.m.input.Value(), h.m.Screen())
	}
	h.typeText("?")
	h.typeText("w")
	if strings.Contains(h.m.Screen(), "shell command") || h.m.input.Value() != "w" {
		t.Fatalf("a key did not close the sheet and type (input %q):\n%s", h.m.input.Value(), h.m.Screen())
	}
	h.typeText("hy?")
	if strings.Contains(h.m.Screen(), "shell command") || h.m.input.Value() != "why?" {
		t.Fatalf("? after text: input %q, want a question mark typed:\n%s", h.m.input.Value(), h.m.Screen())
	}
}
