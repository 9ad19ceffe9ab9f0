package subagent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/announce"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// otherProcess is a second Service on h's stores and mailbox, as another
// process sharing a PostgreSQL store would be: it runs none of h's runs.
func (h *harness) otherProcess() *Service {
	h.t.Helper()
	return h.otherProcessOn(h.svc.cfg.Tasks, h.svc.cfg.Mailbox)
}

// otherProcessOn is otherProcess on handles of its own to the store.
func (h *harness) otherProcessOn(tasks task.Store, mb mailbox.Mailbox) *Service {
	h.t.Helper()
	svc, err := New(Config{
		Bus: h.bus, Now: func() time.Time { return fixedNow }, Sessions: h.sessions, Index: h.mem, Agents: h.agents,
		Policy: h.policy, Resolve: h.resolve, BaseTools: func() []tool.Tool { return h.base }, MainCwd: h.dir,
		OutputDir: h.svc.cfg.OutputDir, ProgressEvery: -1,
		Tasks: tasks, Mailbox: mb, Owner: "process-b",
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return svc
}

// TestSendMessageFromAnotherProcess (S-X2): a message sent through
// another process's Service, which finds the agent running elsewhere by
// its record, reaches the run at its next loop boundary.
func TestSendMessageFromAnotherProcess(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{mailbox: true, script: g.readAfter()})
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "work", Name: "bob"})
	recv(t, g.entered, "the child's first model call")
	b := h.otherProcess()
	text, err := b.SendMessage(context.Background(), Caller{RootSessionID: h.mainID}, "bob", "also check the tests")
	if err != nil || !strings.Contains(text, "queued for agent "+id) {
		t.Fatalf("SendMessage from the other process = %q, %v", text, err)
	}
	if b.live(id) != nil {
		t.Fatal("the other process started a run of its own")
	}
	send(t, g.release, struct{}{}, "the release")
	h.notification(id)
	reqs := h.requestsOf("general-purpose")
	if len(reqs) != 2 {
		t.Fatalf("the child made %d model calls, want 2", len(reqs))
	}
	if got := lastMessage(reqs[1]); got != "user: also check the tests" {
		t.Errorf("the child's next request ends with %q", got)
	}
	// Its run has ended and closed its inbox: the other process is told
	// it is not running there, and would resume it.
	late := queue.Entry{Priority: queue.Next, Mode: queue.ModeMessage, Target: id, Message: llm.UserText("too late")}
	if queued, err := b.courier().SendElsewhere(context.Background(), late); err != nil || queued {
		t.Errorf("a message for the ended run: queued %v, %v", queued, err)
	}
}

// fakeWatch is a TaskWatcher the test fires by hand.
type fakeWatch struct {
	mu       sync.Mutex
	chans    map[string]chan struct{}
	watching chan string
}

func (f *fakeWatch) WatchTask(_ context.Context, id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	f.mu.Lock()
	f.chans[id] = ch
	f.mu.Unlock()
	f.watching <- id
	return ch, func() {}
}

func (f *fakeWatch) fire(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chans[id] <- struct{}{}
}

// TestStopHeardAtOnceThroughAWatch (S-X2): with a TaskWatcher, a stop
// recorded by another process ends the run when the watch fires, not at
// the next poll (an hour away here); a change that is no stop does not.
func TestStopHeardAtOnceThroughAWatch(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		return nil, g.wait(ctx, req)
	}})
	w := &fakeWatch{chans: map[string]chan struct{}{}, watching: make(chan string, 1)}
	h.svc.cfg.WatchInterval = time.Hour
	h.svc.cfg.Watch = w
	h.svc.rewire()
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "local", Prompt: "work"})
	recv(t, g.entered, "the child")
	if got := recv(t, w.watching, "the run's watch"); got != id {
		t.Fatalf("watching %q, want %q", got, id)
	}
	ctx := context.Background()
	update := func(fn func(*task.Task)) {
		t.Helper()
		if _, err := h.svc.cfg.Tasks.UpdateTask(ctx, id, func(r *task.Task) error { fn(r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	update(func(r *task.Task) { r.Progress = "someone else's note" })
	w.fire(id)
	update(func(r *task.Task) { r.CancelRequested = true })
	w.fire(id)
	if note := h.notification(id); !strings.Contains(note, "<status>killed</status>") {
		t.Errorf("notification of a run stopped through its record: %s", note)
	}
}

// TestSendMessageToARunEndingInAnotherProcess: a message from another
// process comes after the run closed its inbox but before it recorded its
// end (here: while it writes its announcement). The sender waits for the
// recorded end and then resumes the agent, rather than starting a second
// run of it beside the first.
func TestSendMessageToARunEndingInAnotherProcess(t *testing.T) {
	announcing := newGate()
	h := newHarness(t, setup{mailbox: true, subagents: config.Subagents{Announce: "summarize"},
		script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			if strings.Contains(req.Messages[len(req.Messages)-1].Text(), announce.Directive()) {
				if err := announcing.wait(ctx, req); err != nil {
					return nil, err
				}
				return reply("summary"), nil
			}
			return reply("done"), nil
		}})
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "work", Name: "bob"})
	recv(t, announcing.entered, "the run's announcement")
	b := h.otherProcess()
	// b hears of the end by its poll (10 ms); its watch only says when it
	// begins to wait.
	w := &fakeWatch{chans: map[string]chan struct{}{}, watching: make(chan string, 4)}
	b.cfg.Watch, b.cfg.WatchInterval = w, 10*time.Millisecond
	b.rewire()
	bc := h.mainCaller() // the main agent, as the other process has it
	bc.Group = NewGroup(context.Background())
	out := make(chan string, 1)
	go func() {
		text, err := b.SendMessage(context.Background(), bc, id, "late message")
		if err != nil {
			text = "error: " + err.Error()
		}
		out <- text
	}()
	recv(t, w.watching, "the other process watching the task")
	if b.live(id) != nil {
		t.Fatal("the other process resumed the agent while its first run was still ending")
	}
	send(t, announcing.release, struct{}{}, "the announcement")
	if text := recv(t, out, "SendMessage from the other process"); !strings.Contains(text, "resumed in the background") {
		t.Errorf("SendMessage from the other process = %q, want the agent resumed", text)
	}
	bc.Group.Wait()
}
