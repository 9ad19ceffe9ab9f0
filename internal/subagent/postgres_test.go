package subagent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit/pgstore"
	"github.com/cadre-dev/cadre/llm"
)

// TestAcrossProcessesOnPostgres (S-X2): a run whose records, mailbox and
// watch are a PostgreSQL store's is reached from another process's
// Service on another connection pool: its message is read at the run's
// next loop boundary, and its stop ends the run through the store's
// change notification — the poll is an hour away, so nothing else could.
func TestAcrossProcessesOnPostgres(t *testing.T) {
	url := pg.URL(t)
	// Opened before the harness, so closed after its runs end.
	a, b := pgstore.Open(t, url), pgstore.Open(t, url)
	g := newGate()
	turns := make(chan *llm.Request, 4)
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		turns <- req
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return replyBlocks(use("toolu_read", "Read", fakeIn{FilePath: "a.go"})), nil
	}})
	h.svc.cfg.Tasks, h.svc.cfg.Mailbox, h.svc.cfg.Watch = a, a.Mailbox(), a
	h.svc.cfg.WatchInterval = time.Hour
	h.svc.rewire()
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "work", Name: "bob"})
	recv(t, turns, "the child's first model call")
	recv(t, g.entered, "the child's first model call")

	other := h.otherProcessOn(b, b.Mailbox())
	ctx := context.Background()
	heard := awaitArrival(t, a.Mailbox(), id)
	text, err := other.SendMessage(ctx, Caller{RootSessionID: h.mainID}, "bob", "also check the tests")
	if err != nil || !strings.Contains(text, "queued for agent "+id) {
		t.Fatalf("SendMessage from the other process = %q, %v", text, err)
	}
	heard()
	send(t, g.release, struct{}{}, "the release")
	next := recv(t, turns, "the child's second model call")
	recv(t, g.entered, "the child's second model call")
	if msgs := next.Messages; len(msgs) == 0 || msgs[len(msgs)-1].Text() != "also check the tests" {
		t.Errorf("the child's second request does not end with the message: %+v", next.Messages)
	}

	asked := time.Now()
	if text, err := other.Stop(ctx, id); err != nil || !strings.Contains(text, "Asked the process running task "+id) {
		t.Fatalf("Stop from the other process = %q, %v", text, err)
	}
	if note := h.notification(id); !strings.Contains(note, "<status>killed</status>") {
		t.Errorf("notification of the run stopped from the other process: %s", note)
	}
	t.Logf("from the stop request to the run's notification: %v", time.Since(asked))
	rec, err := b.GetTask(ctx, id)
	if err != nil || rec.Status != "killed" {
		t.Errorf("the record the other process reads: %s, %v; want killed", rec.Status, err)
	}
}

// TestInboxOpenedWithTheRecordOnPostgres: where sessions, tasks and the
// mailbox are one PostgreSQL store, as cadre's, a background child's inbox
// is opened by the write that records it (no open of its own), and a
// message from another process reaches the run at its next boundary.
func TestInboxOpenedWithTheRecordOnPostgres(t *testing.T) {
	url := pg.URL(t)
	other := pgstore.Open(t, url)
	g := newGate()
	turns := make(chan *llm.Request, 4)
	h := newHarness(t, setup{postgres: url, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		turns <- req
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return replyBlocks(use("toolu_read", "Read", fakeIn{FilePath: "a.go"})), nil
	}})
	if !h.svc.records.OpensInboxes() {
		t.Fatal("the Service on one PostgreSQL store does not open inboxes with the records")
	}
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "work", Name: "bob"})
	recv(t, turns, "the child's first model call")
	recv(t, g.entered, "the child's first model call")

	ctx := context.Background()
	heard := awaitArrival(t, h.svc.cfg.Mailbox, id)
	text, err := h.otherProcessOn(other, other.Mailbox()).SendMessage(ctx, Caller{RootSessionID: h.mainID}, "bob", "also check the tests")
	if err != nil || !strings.Contains(text, "queued for agent "+id) {
		t.Fatalf("SendMessage from the other process = %q, %v", text, err)
	}
	heard()
	send(t, g.release, struct{}{}, "the release")
	next := recv(t, turns, "the child's second model call")
	if msgs := next.Messages; len(msgs) == 0 || msgs[len(msgs)-1].Text() != "also check the tests" {
		t.Errorf("the child's second request does not end with the message: %+v", next.Messages)
	}
}

// awaitArrival subscribes, on the run's own store, to the arrivals for
// agent id and returns a func that waits for the next one. A run hears a
// push from another process through its store's change notification,
// which comes a moment after the push commits: a boundary reached before
// it takes the message at the boundary after (or when the run closes its
// inbox). Releasing the run only once the push was heard on the same
// listener makes "read at the next boundary" the test's to check.
func awaitArrival(t *testing.T, mb interface {
	Arrived(ctx context.Context, agentID string) (<-chan struct{}, func())
}, id string) func() {
	t.Helper()
	ch, stop := mb.Arrived(t.Context(), id)
	t.Cleanup(stop)
	// The listener is up (the run subscribed first); a wake-up of its
	// (re)connection may still be pending: the push's comes after it.
	select {
	case <-ch:
	default:
	}
	return func() {
		t.Helper()
		recv(t, ch, "the push's arrival on the run's store")
	}
}
