package runtable

import (
	"strings"
	"sync"
	"testing"
)

type run struct{ id string }

func TestNames(t *testing.T) {
	tb := New[*run]()
	key, err := tb.ReserveName("root", "Bob", "")
	if err != nil {
		t.Fatalf("first reservation: %v", err)
	}
	if _, err := tb.ReserveName("root", "bob", ""); err == nil || !strings.Contains(err.Error(), "being given") {
		t.Fatalf("second reservation of a name being given = %v, want refused", err)
	}
	if _, err := tb.ReserveName("other", "bob", ""); err != nil {
		t.Fatalf("the name in another run tree = %v, want free", err)
	}
	tb.Track("a1", "root", "Bob", &run{"a1"})
	tb.Unreserve([]string{key})
	cases := []struct {
		name, continuing string
		closing          bool
		want             string
	}{
		{"bob", "", false, "taken by agent a1"},
		{"bob", "a1", false, ""}, // the agent being continued keeps its name
		{"bob", "", true, ""},    // a run closed to messages is resumed, not named
		{"alice", "", false, ""},
	}
	for _, c := range cases {
		tb.Closing("a1", func() bool { return c.closing })
		key, err := tb.ReserveName("root", c.name, c.continuing)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("ReserveName(%q, continuing %q, closing %v) = %v, want %q", c.name, c.continuing, c.closing, err, c.want)
		}
		tb.Unreserve([]string{key})
	}
}

func TestReserveRefusesARunningSession(t *testing.T) {
	tb := New[*run]()
	tb.Track("s1", "root", "", &run{"s1"})
	if tb.Reserve("session\x00s1", "s1") {
		t.Fatal("reserved the session of a run in progress")
	}
	tb.Untrack("s1")
	if !tb.Reserve("session\x00s1", "s1") {
		t.Fatal("refused the session of a run that ended")
	}
	if tb.Reserve("session\x00s1", "s1") {
		t.Fatal("reserved one session twice")
	}
}

// TestChildPlaces: spawns at the same time never pass the limit, and a
// launched child counts once, active or reserved.
func TestChildPlaces(t *testing.T) {
	tb := New[*run]()
	var (
		mu     sync.Mutex
		active int
		keys   []string
		wg     sync.WaitGroup
	)
	count := func() int { return active } // under the table's lock
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if key, err := tb.ReserveChild("parent", 3, count); err == nil {
				mu.Lock()
				keys = append(keys, key)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(keys) != 3 {
		t.Fatalf("%d places taken with a limit of 3", len(keys))
	}
	left := tb.Adopt("parent", []string{keys[0], "name\x00x"}, func() { active++ })
	if len(left) != 1 || left[0] != "name\x00x" {
		t.Fatalf("Adopt left %q, want the name's reservation alone", left)
	}
	if _, err := tb.ReserveChild("parent", 3, count); err == nil {
		t.Fatal("a fourth child passed: the adopted one counted neither active nor reserved")
	}
	if key, err := tb.ReserveChild("parent", 0, count); key != "" || err != nil {
		t.Fatalf("no limit = %q, %v, want no reservation", key, err)
	}
}

func TestQueueAndClosing(t *testing.T) {
	tb := New[*run]()
	pushed := 0
	push := func() { pushed++ }
	if _, found, queued := tb.Queue("a", push); found || queued || pushed != 0 {
		t.Fatalf("an unknown run: found %v, queued %v, pushed %d", found, queued, pushed)
	}
	a := &run{"a"}
	tb.Track("a", "root", "", a)
	if got, found, queued := tb.Queue("a", push); got != a || !found || !queued || pushed != 1 {
		t.Fatalf("a running run: %v, found %v, queued %v, pushed %d", got, found, queued, pushed)
	}
	tb.Closing("a", func() bool { return true })
	if _, found, queued := tb.Queue("a", push); !found || queued || pushed != 1 {
		t.Fatalf("a closed run: found %v, queued %v, pushed %d", found, queued, pushed)
	}
	if tree := tb.Tree("root"); len(tree) != 1 || tree[0] != a {
		t.Fatalf("Tree = %v", tree)
	}
}

func TestAgentCall(t *testing.T) {
	tb := New[*run]()
	if got := tb.AgentCall("a", "", "toolu_1"); got != "toolu_1" {
		t.Fatalf("first launch = %q", got)
	}
	if got := tb.AgentCall("a", "", "toolu_2"); got != "toolu_1" {
		t.Fatalf("a resumed agent = %q, want the call that first launched it", got)
	}
	if got := tb.AgentCall("a", "toolu_0", "toolu_3"); got != "toolu_0" {
		t.Fatalf("a named call = %q", got)
	}
}
