package queuetest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/llm"
)

// Mailbox is what the suite tests (the methods of queue.Mailbox).
type Mailbox interface {
	Open(ctx context.Context, agentID, owner string) (bool, error)
	Push(ctx context.Context, e queue.Entry) (bool, error)
	Take(ctx context.Context, agentID string) ([]queue.Entry, error)
	CloseIfEmpty(ctx context.Context, agentID string) ([]queue.Entry, error)
	Arrived(ctx context.Context, agentID string) (<-chan struct{}, func())
}

// deadline bounds every wait: generous, since a loaded machine is slow, and
// only a defect reaches it.
const deadline = 30 * time.Second

// Run tests a Mailbox implementation. newStore must make a fresh, empty
// store and return a function that opens another handle on it each time it
// is called — for a database, a handle with its own connections, as a
// separate process would have — arranging cleanups with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) func() Mailbox) {
	tests := []struct {
		name string
		fn   func(t *testing.T, handle func() Mailbox)
	}{
		{"OrderAndFields", testOrderAndFields},
		{"OnlyOpenInboxesTakeMessages", testOpenClose},
		{"OpenSaysWhatWaits", testOpenSaysWhatWaits},
		{"ExactlyOnceAmongRacingTakers", testRacingTakers},
		{"PushesRacingTheCloseAreTakenOrRefused", testRacingClose},
		{"WaiterWokenByAnotherHandle", testWaiterWakes},
		{"CanceledContext", testCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
}

func texts(es []queue.Entry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Message.Text())
	}
	return out
}

func mustOpen(t *testing.T, m Mailbox, agent string) {
	t.Helper()
	if _, err := m.Open(t.Context(), agent, "owner-1"); err != nil {
		t.Fatalf("Open(%s): %v", agent, err)
	}
}

// Open reports whether messages wait in the inbox it opens: none in a new
// one, those an earlier run left in a reopened one, on any handle.
func testOpenSaysWhatWaits(t *testing.T, handle func() Mailbox) {
	m, other := handle(), handle()
	open := func(m Mailbox) bool {
		t.Helper()
		waiting, err := m.Open(t.Context(), "a1", "owner-1")
		if err != nil {
			t.Fatalf("Open(a1): %v", err)
		}
		return waiting
	}
	if open(m) {
		t.Fatal("a new inbox: Open says messages wait")
	}
	mustPush(t, other, queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: "a1", Message: llm.UserText("left over")})
	if !open(other) {
		t.Fatal("an inbox reopened with a message left in it: Open says none waits")
	}
	if got := texts(mustTake(t, m, "a1")); !slices.Equal(got, []string{"left over"}) {
		t.Fatalf("took %q, want [left over]", got)
	}
	if open(m) {
		t.Fatal("an inbox reopened after its messages were taken: Open says some wait")
	}
}

func mustPush(t *testing.T, m Mailbox, e queue.Entry) {
	t.Helper()
	ok, err := m.Push(t.Context(), e)
	if err != nil || !ok {
		t.Fatalf("Push(%s, %q) = %v, %v; want true, nil", e.Target, e.Message.Text(), ok, err)
	}
}

func mustTake(t *testing.T, m Mailbox, agent string) []queue.Entry {
	t.Helper()
	es, err := m.Take(t.Context(), agent)
	if err != nil {
		t.Fatalf("Take(%s): %v", agent, err)
	}
	return es
}

// Entries come out by priority, then in push order, with every field as
// pushed (the enqueue time to the millisecond), and only to their agent.
func testOrderAndFields(t *testing.T, handle func() Mailbox) {
	m := handle()
	mustOpen(t, m, "a1")
	mustOpen(t, m, "a2")
	at := time.UnixMilli(1_700_000_000_123)
	push := func(p queue.Priority, target, text string) {
		mustPush(t, m, queue.Entry{Priority: p, Mode: queue.ModeMessage, Target: target, Message: llm.UserText(text), Enqueued: at})
	}
	push(queue.Later, "a1", "later 1")
	push(queue.Next, "a1", "next 1")
	push(queue.Next, "a2", "other agent")
	push(queue.Now, "a1", "now")
	push(queue.Later, "a1", "later 2")
	push(queue.Next, "a1", "next 2")
	full := queue.Entry{
		Priority: queue.Next, Mode: queue.ModeNotification, Target: "a2", TaskID: "t-9", UUID: "u-1", Agent: "reviewer",
		Message:  llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("line one\nline \"two\" ✓"), llm.Text("second block")}},
		Enqueued: at,
	}
	mustPush(t, m, full)

	if got, want := texts(mustTake(t, m, "a1")), []string{"now", "next 1", "next 2", "later 1", "later 2"}; !slices.Equal(got, want) {
		t.Errorf("a1 took %q, want %q", got, want)
	}
	if got := mustTake(t, m, "a1"); len(got) != 0 {
		t.Errorf("a1 took %q again", texts(got))
	}
	got := mustTake(t, m, "a2")
	if len(got) != 2 || got[0].Message.Text() != "other agent" {
		t.Fatalf("a2 took %q, want [other agent, the full entry]", texts(got))
	}
	if !got[1].Enqueued.Equal(at) {
		t.Errorf("enqueued %v, want %v", got[1].Enqueued, at)
	}
	got[1].Enqueued = at
	if diff := cmp.Diff(full, got[1], cmpopts.IgnoreUnexported(queue.Entry{})); diff != "" {
		t.Errorf("the entry changed on its way (-pushed +taken):\n%s", diff)
	}
}

// A push reaches only an open inbox; CloseIfEmpty closes only an empty one;
// an inbox opened again keeps what an earlier run left.
func testOpenClose(t *testing.T, handle func() Mailbox) {
	m := handle()
	ctx := t.Context()
	msg := func(text string) queue.Entry {
		return queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: "a1", Message: llm.UserText(text)}
	}
	if ok, err := m.Push(ctx, msg("too early")); ok || err != nil {
		t.Errorf("Push to an inbox never opened = %v, %v; want false, nil", ok, err)
	}
	if ok, err := m.Push(ctx, queue.Entry{Message: llm.UserText("nobody")}); ok || err == nil {
		t.Errorf("Push with no target = %v, %v; want an error", ok, err)
	}
	mustOpen(t, m, "a1")
	mustPush(t, m, msg("one"))
	left, err := m.CloseIfEmpty(ctx, "a1")
	if err != nil || !slices.Equal(texts(left), []string{"one"}) {
		t.Fatalf("CloseIfEmpty with one waiting = %q, %v; want [one]", texts(left), err)
	}
	mustPush(t, m, msg("two")) // still open
	if got := texts(mustTake(t, m, "a1")); !slices.Equal(got, []string{"two"}) {
		t.Errorf("took %q, want [two]", got)
	}
	if left, err := m.CloseIfEmpty(ctx, "a1"); err != nil || len(left) != 0 {
		t.Fatalf("CloseIfEmpty when empty = %q, %v", texts(left), err)
	}
	if ok, err := m.Push(ctx, msg("too late")); ok || err != nil {
		t.Errorf("Push to a closed inbox = %v, %v; want false, nil", ok, err)
	}
	if got := mustTake(t, m, "a1"); len(got) != 0 {
		t.Errorf("a refused push was queued: %q", texts(got))
	}
	// A run that ended without closing (its process died) left a message;
	// the next run of the agent reads it.
	mustOpen(t, m, "a1")
	mustPush(t, m, msg("left over"))
	mustOpen(t, m, "a1")
	if got := texts(mustTake(t, m, "a1")); !slices.Equal(got, []string{"left over"}) {
		t.Errorf("after reopening took %q, want [left over]", got)
	}
}

// Takers on separate handles race a pusher: every entry is taken exactly
// once, and each taker gets its share in push order.
func testRacingTakers(t *testing.T, handle func() Mailbox) {
	const (
		takers  = 4
		entries = 120
	)
	pusher := handle()
	mustOpen(t, pusher, "a1")
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	var (
		mu    sync.Mutex
		seen  = map[int]int{}
		total int
		done  = make(chan struct{})
		wg    sync.WaitGroup
	)
	hs := make([]Mailbox, takers)
	for i := range hs {
		hs[i] = handle()
	}
	for i, h := range hs {
		arrived, stop := h.Arrived(ctx, "a1")
		wg.Go(func() {
			defer stop()
			last := -1
			for {
				es, err := h.Take(ctx, "a1")
				if err != nil {
					t.Errorf("taker %d: %v", i, err)
					return
				}
				mu.Lock()
				for _, e := range es {
					n, _ := strconv.Atoi(e.Message.Text())
					if n <= last {
						t.Errorf("taker %d took %d after %d", i, n, last)
					}
					last = n
					seen[n]++
					total++
				}
				if total == entries && len(es) > 0 {
					close(done)
				}
				mu.Unlock()
				select {
				case <-arrived:
				case <-done:
					return
				case <-ctx.Done():
					t.Errorf("taker %d: no more entries arrived before the deadline", i)
					return
				}
			}
		})
	}
	for n := range entries {
		mustPush(t, pusher, queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: "a1", Message: llm.UserText(strconv.Itoa(n))})
	}
	wg.Wait()
	for n := range entries {
		if seen[n] != 1 {
			t.Errorf("entry %d taken %d times", n, seen[n])
		}
	}
}

// Pushers on separate handles race a run closing its inbox: every push
// that was accepted is taken by the run, every other one was refused.
func testRacingClose(t *testing.T, handle func() Mailbox) {
	const (
		pushers = 3
		each    = 20
	)
	run := handle()
	mustOpen(t, run, "a1")
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		accepted = map[string]bool{}
	)
	for p := range pushers {
		h := handle()
		wg.Go(func() {
			for i := range each {
				text := fmt.Sprintf("%d-%d", p, i)
				ok, err := h.Push(ctx, queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: "a1", Message: llm.UserText(text)})
				if err != nil {
					t.Errorf("push %s: %v", text, err)
					return
				}
				if ok {
					mu.Lock()
					accepted[text] = true
					mu.Unlock()
				}
			}
		})
	}
	taken := map[string]int{}
	for {
		left, err := run.CloseIfEmpty(ctx, "a1")
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 {
			break
		}
		for _, text := range texts(left) {
			taken[text]++
		}
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	for text := range accepted {
		if taken[text] != 1 {
			t.Errorf("accepted push %s was taken %d times", text, taken[text])
		}
	}
	for text, n := range taken {
		if !accepted[text] || n != 1 {
			t.Errorf("took %s %d times; accepted: %v", text, n, accepted[text])
		}
	}
	if got := mustTake(t, run, "a1"); len(got) != 0 {
		t.Errorf("stranded in the closed inbox: %q", texts(got))
	}
}

// A waiter on one handle wakes when another handle pushes for its agent,
// and finds the entry.
func testWaiterWakes(t *testing.T, handle func() Mailbox) {
	a, b := handle(), handle()
	mustOpen(t, a, "a1")
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	arrived, stop := b.Arrived(ctx, "a1")
	defer stop()
	if got := mustTake(t, b, "a1"); len(got) != 0 {
		t.Fatalf("took %q before any push", texts(got))
	}
	got := make(chan []queue.Entry, 1)
	go func() {
		for {
			select {
			case <-arrived:
			case <-ctx.Done():
				got <- nil
				return
			}
			es, err := b.Take(ctx, "a1")
			if err != nil || len(es) > 0 {
				got <- es
				return
			}
		}
	}()
	mustPush(t, a, queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: "a1", Message: llm.UserText("wake up")})
	if es := <-got; !slices.Equal(texts(es), []string{"wake up"}) {
		t.Fatalf("the waiter got %q (nil: it never woke before the deadline)", texts(es))
	}
}

// Operations under a cancelled context fail or, for a memory mailbox that
// never blocks, still behave; none may hang or queue half a message.
func testCanceled(t *testing.T, handle func() Mailbox) {
	m := handle()
	mustOpen(t, m, "a1")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ok, err := m.Push(ctx, queue.Entry{Target: "a1", Message: llm.UserText("x")})
	if err == nil && !ok {
		t.Errorf("Push under a cancelled context refused the open inbox without an error")
	}
	got := mustTake(t, m, "a1")
	if err != nil && len(got) != 0 {
		t.Errorf("a failed push queued %q", texts(got))
	}
	// A subscription made with a cancelled context ends at once; its stop
	// is still safe to call.
	_, stop := m.Arrived(ctx, "a1")
	stop()
	stop()
}
