package cadre_test

import (
	"context"
	"testing"

	"github.com/cadre-dev/cadre"
)

// A conversation opened without a prompt (the TUI's) is named by its first
// message's first line, as a headless run is by its prompt; a resumed
// session keeps its name.
func TestConversationTitledByItsFirstMessage(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("What is in notes.txt?\nPlease be brief.")
	cv.close()
	s, _, err := rt.Session(context.Background(), cv.c.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	if s.Title != "What is in notes.txt?" {
		t.Errorf("title %q, want the first message's first line", s.Title)
	}
	again := openConvo(t, rt, cadre.OpenRequest{Resume: s.ID})
	again.send("And now?")
	again.close()
	if s, _, _ = rt.Session(context.Background(), s.ID); s.Title != "What is in notes.txt?" {
		t.Errorf("title %q after resuming, want the first one kept", s.Title)
	}
}
