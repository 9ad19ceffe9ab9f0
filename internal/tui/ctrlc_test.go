package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

const quitHint = "Press Ctrl+C again to quit"

// Ctrl+C while a turn runs interrupts it, as Esc does; a second press
// within the window still quits (a turn that will not stop cannot trap
// the user), and once the window is over the next press only warns.
func TestCtrlCInterruptsTheTurn(t *testing.T) {
	h := newHarness(t)
	h.typeText("Do something long")
	h.press(tea.KeyEnter, 0)
	if cmd := h.press('c', tea.ModCtrl); cmd != nil && isQuit(cmd) {
		t.Fatal("ctrl+c during a turn quit")
	}
	if h.conv.interrupts != 1 {
		t.Fatalf("ctrl+c during a turn: %d interrupts, want 1", h.conv.interrupts)
	}
	if s := h.m.Screen(); !strings.Contains(s, "Interrupted.") {
		t.Fatalf("ctrl+c during a turn does not say it interrupted:\n%s", s)
	}
	h.event(result())
	h.update(quitExpiredMsg{h.m.quitSeq})
	h.now = h.now.Add(quitWindow)
	if cmd := h.press('c', tea.ModCtrl); cmd != nil && isQuit(cmd) {
		t.Fatal("the first ctrl+c after the interrupted turn quit")
	}
	if !strings.Contains(h.m.Screen(), quitHint) {
		t.Fatalf("no hint after the first ctrl+c on an idle prompt:\n%s", h.m.Screen())
	}
	if h.conv.interrupts != 1 {
		t.Fatalf("ctrl+c with no turn running interrupted: %d interrupts, want 1", h.conv.interrupts)
	}

	// Twice during a turn quits.
	h.typeText("Another long one")
	h.press(tea.KeyEnter, 0)
	h.press('c', tea.ModCtrl)
	if cmd := h.press('c', tea.ModCtrl); cmd == nil || !isQuit(cmd) {
		t.Fatal("ctrl+c twice during a turn did not quit")
	}
}

// Ctrl+C on a prompt holding text clears it; only then does it warn.
func TestCtrlCClearsTheInputFirst(t *testing.T) {
	h := newHarness(t)
	h.typeText("half a thought")
	if cmd := h.press('c', tea.ModCtrl); cmd != nil && isQuit(cmd) {
		t.Fatal("ctrl+c with text quit")
	}
	if v := h.m.input.Value(); v != "" || strings.Contains(h.m.Screen(), quitHint) {
		t.Fatalf("ctrl+c with text: input %q, want it cleared with no quit hint:\n%s", v, h.m.Screen())
	}
	h.press('c', tea.ModCtrl)
	if cmd := h.press('c', tea.ModCtrl); cmd == nil || !isQuit(cmd) {
		t.Fatal("ctrl+c twice on the cleared prompt did not quit")
	}
}

// The "press again" state lasts quitWindow: its expiry message takes the
// hint away, and a second press later than that, by the clock, warns
// again instead of quitting.
func TestCtrlCHintExpires(t *testing.T) {
	h := newHarness(t)
	var scheduled []tea.Msg
	h.m.after = func(d time.Duration, msg tea.Msg) tea.Cmd {
		if d != quitWindow {
			t.Errorf("the hint is scheduled to last %s, want %s", d, quitWindow)
		}
		scheduled = append(scheduled, msg)
		return nil
	}
	h.press('c', tea.ModCtrl)
	if !strings.Contains(h.m.Screen(), quitHint) {
		t.Fatalf("no hint after the first ctrl+c:\n%s", h.m.Screen())
	}
	// The press schedules its own expiry.
	if len(scheduled) != 1 {
		t.Fatalf("the first ctrl+c scheduled %d messages, want its expiry", len(scheduled))
	}
	expiry := scheduled[0]
	h.now = h.now.Add(quitWindow)
	h.update(expiry)
	if strings.Contains(h.m.Screen(), quitHint) {
		t.Fatalf("the hint outlived its window:\n%s", h.m.Screen())
	}
	if cmd := h.press('c', tea.ModCtrl); cmd != nil && isQuit(cmd) {
		t.Fatal("a ctrl+c after the hint expired quit")
	}

	// Without the expiry message (a busy program, say), the clock alone
	// decides: a second press after the window warns again.
	h.now = h.now.Add(quitWindow + time.Second)
	if cmd := h.press('c', tea.ModCtrl); cmd != nil && isQuit(cmd) {
		t.Fatal("a second ctrl+c past the window quit")
	}
	if !strings.Contains(h.m.Screen(), quitHint) {
		t.Fatalf("a late second ctrl+c did not warn again:\n%s", h.m.Screen())
	}
	// An old expiry does not end the newer arming.
	h.update(expiry)
	if !strings.Contains(h.m.Screen(), quitHint) {
		t.Fatalf("a stale expiry took away the newer hint:\n%s", h.m.Screen())
	}
	h.now = h.now.Add(quitWindow / 2)
	if cmd := h.press('c', tea.ModCtrl); cmd == nil || !isQuit(cmd) {
		t.Fatal("a second ctrl+c within the window did not quit")
	}
}
