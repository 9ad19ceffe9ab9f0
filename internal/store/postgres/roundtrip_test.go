package postgres

import (
	"fmt"
	"testing"

	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

// TestMailboxRoundTrips: a run's inbox costs one round trip to open (which
// also says whether messages wait) and one to close, whether it closes or
// hands back what waits.
func TestMailboxRoundTrips(t *testing.T) {
	proxy, url := newProxy(t, pg.URL(t))
	mb := open(t, url).Mailbox()
	ctx := t.Context()
	// Each statement's first use on a connection prepares it (a round
	// trip of pgx's statement cache): one inbox's life first.
	if _, err := mb.Open(ctx, "warm", "o"); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.CloseIfEmpty(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		do   func() error
		want int
	}{
		{"open", func() error { _, err := mb.Open(ctx, "a1", "o"); return err }, 1},
		{"push", func() error { _, err := mb.Push(ctx, msgFor("a1")); return err }, -1},
		{"close with a message waiting", func() error {
			es, err := mb.CloseIfEmpty(ctx, "a1")
			if err == nil && len(es) != 1 {
				t.Errorf("close handed back %d messages, want 1", len(es))
			}
			return err
		}, 1},
		{"close", func() error {
			es, err := mb.CloseIfEmpty(ctx, "a1")
			if err == nil && len(es) != 0 {
				t.Errorf("close handed back %d messages, want none", len(es))
			}
			return err
		}, 1},
	} {
		proxy.count()
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := proxy.count(); c.want >= 0 && n != c.want {
			t.Errorf("%s took %d round trips, want %d", c.name, n, c.want)
		}
	}
	if ok, err := mb.Push(ctx, msgFor("a1")); ok || err != nil {
		t.Errorf("push after the close: %v, %v; want refused", ok, err)
	}
}

// TestCreateSessionTaskOneRoundTrip: a background child's two records
// are created in one round trip (one statement).
func TestCreateSessionTaskOneRoundTrip(t *testing.T) {
	proxy, url := newProxy(t, pg.URL(t))
	db := open(t, url)
	for i := range 3 {
		id := fmt.Sprintf("c%d", i)
		proxy.count()
		if err := db.CreateSessionTask(t.Context(), info(id), tasktest.Sample(id)); err != nil {
			t.Fatal(err)
		}
		// The first prepares the statement on its connection.
		if n := proxy.count(); i > 0 && n != 1 {
			t.Errorf("CreateSessionTask took %d round trips, want 1", n)
		}
	}
}
