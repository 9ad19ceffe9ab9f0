package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
)

// mentionHarness is a harness whose workspace holds main.go, beside a
// directory outside it with a secret that a link inside points to.
func mentionHarness(t *testing.T) *harness {
	base := t.TempDir()
	root, outside := filepath.Join(base, "project"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, text string) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "main.go"), "package main\n\n// The fruit is MANGO.\n")
	write(filepath.Join(outside, "secret.txt"), "SECRET\n")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, conv: &fakeConv{}, now: t0}
	h.m = New(t.Context(), Config{
		Conversation: h.conv, Approvals: cadre.NewApprovals(), Model: "sonnet", Agents: []string{"reviewer"}, Cwd: root,
		Now: func() time.Time { return h.now },
	})
	h.m.after = func(time.Duration, tea.Msg) tea.Cmd { return nil }
	h.update(tea.WindowSizeMsg{Width: 80, Height: 20})
	return h
}

// "@ma" offers main.go; Tab completes it, and the message sent carries
// the file for the model, as a block after the text typed.
func TestMentionAttachesAFile(t *testing.T) {
	h := mentionHarness(t)
	h.typeText("@ma")
	if !strings.Contains(h.m.Screen(), "@ main.go") {
		t.Fatalf("@ma does not offer main.go:\n%s", h.m.Screen())
	}
	h.press(tea.KeyTab, 0)
	if v := h.m.input.Value(); v != "@main.go " {
		t.Fatalf("Tab completed %q, want @main.go", v)
	}
	h.typeText("what is the fruit?")
	h.press(tea.KeyEnter, 0)
	if len(h.conv.msgs) != 1 {
		t.Fatalf("%d messages sent, want 1", len(h.conv.msgs))
	}
	msg := h.conv.msgs[0]
	if msg.Text != "@main.go what is the fruit?" || len(msg.Blocks) != 1 || !strings.Contains(msg.Blocks[0].Text, "The fruit is MANGO.") {
		t.Fatalf("sent %+v, want the text and main.go attached", msg)
	}
	if !strings.Contains(h.m.Screen(), "⎿ attached main.go (3 lines)") {
		t.Errorf("the transcript does not say what was attached:\n%s", h.m.Screen())
	}
	// An agent's name still runs the agent; "@" offers it first.
	h.event(result())
	h.typeText("@rev")
	if !strings.Contains(h.m.Screen(), "@ reviewer") {
		t.Errorf("@rev does not offer the agent:\n%s", h.m.Screen())
	}
}

// The attack: a mention that leaves the workspace, by "..", by an
// absolute path or through a link, is refused, and nothing is sent.
func TestMentionOutsideTheWorkspaceIsRefused(t *testing.T) {
	h := mentionHarness(t)
	for _, line := range []string{
		"@../../etc/passwd what is in it?",
		"summarise @../outside/secret.txt",
		"read @/etc/passwd please",
		"what does @link.txt say?",
	} {
		h.typeText(line)
		h.press(tea.KeyEnter, 0)
		last := h.m.items[len(h.m.items)-1]
		if last.kind != kindError || !strings.Contains(last.text, "outside the workspace") {
			t.Errorf("%s: last item %+v, want a refusal", line, last)
		}
		h.m.input.Reset()
	}
	if len(h.conv.msgs) != 0 {
		t.Errorf("sent %+v, want nothing", h.conv.msgs)
	}
	h.typeText("@../")
	if len(h.m.completion) != 0 {
		t.Errorf("@../ offers %q, want nothing outside the workspace", h.m.completion)
	}
}
