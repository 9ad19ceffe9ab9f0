package sessiontree

import (
	"context"
	"iter"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	"github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// source is one running session: its first message, then whatever the
// test puts in live.
type source struct{ live chan cadre.Event }

func (s source) SessionTree(_ context.Context, id string) (cadre.SessionTree, error) {
	n := cadre.SessionNode{Session: cadre.Session{ID: id, ParentID: "main0000", Agent: "tester", Status: cadre.SessionRunning, NumTurns: 1}}
	return cadre.SessionTree{Session: n, Siblings: []cadre.SessionNode{n}}, nil
}

func (s source) WatchSession(ctx context.Context, _ string) iter.Seq2[cadre.Event, error] {
	return func(yield func(cadre.Event, error) bool) {
		if !yield(text(cadre.EventUser, "FIRST: take the printer."), nil) {
			return
		}
		for {
			select {
			case ev := <-s.live:
				if !yield(ev, nil) {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
}

func text(typ cadre.EventType, s string) cadre.Event {
	role := llm.RoleUser
	if typ == cadre.EventAssistant {
		role = llm.RoleAssistant
	}
	return cadre.Event{Type: typ, Message: &llm.Message{Role: role, Content: []llm.Block{llm.Text(s)}}}
}

// TestScreenFollowsAndEndsItsWatch: the screen shows the session's
// messages as they come, sends a typed message through its Send, and
// Close ends the watch's goroutine (goleak checks).
func TestScreenFollowsAndEndsItsWatch(t *testing.T) {
	src := source{live: make(chan cadre.Event, 1)}
	var sent []string
	send := func(_ context.Context, id, text string) (string, error) {
		sent = append(sent, id+" "+text)
		return "queued", nil
	}
	s := New(t.Context(), src, send, "bob00001")
	defer s.Close()
	feed := func(cmd tea.Cmd) {
		t.Helper()
		if cmd == nil {
			return
		}
		s.Update(cmd())
	}
	s.Update(StartMsg{s})
	feed(s.Load())
	feed(s.Next())
	src.live <- text(cadre.EventAssistant, "LIVE: printing.")
	feed(s.Next())
	screen := ansi.Strip(s.View(80, 16))
	for _, want := range []string{"Session tree · tester · running · 1 turns · bob00001", "› FIRST: take the printer.", "LIVE: printing."} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	s.Update(tea.KeyPressMsg{Code: 's', Text: "s"})
	for _, r := range "go on" {
		s.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	_, cmd := s.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	feed(cmd)
	if len(sent) != 1 || sent[0] != "bob00001 go on" {
		t.Errorf("sent %q", sent)
	}
	if screen := ansi.Strip(s.View(80, 16)); !strings.Contains(screen, "queued") {
		t.Errorf("the send's outcome is not shown:\n%s", screen)
	}
}
