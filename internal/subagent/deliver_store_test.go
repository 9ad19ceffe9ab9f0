package subagent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// heldMark is a task store whose first write that claims a task's
// notified flag is slow: it answers only when released, as a write queued
// behind others would.
type heldMark struct {
	task.Store
	once    sync.Once
	entered chan string
	release chan struct{}
}

func (m *heldMark) hold(id string) {
	first := false
	m.once.Do(func() { first = true })
	if first {
		m.entered <- id
		<-m.release
	}
}

func (m *heldMark) MarkNotified(ctx context.Context, id string) (bool, error) {
	won, err := m.Store.MarkNotified(ctx, id)
	m.hold(id)
	return won, err
}

func (m *heldMark) UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	rec, err := m.Store.UpdateTask(ctx, id, fn)
	if err == nil && rec.Notified {
		m.hold(id)
	}
	return rec, err
}

func (m *heldMark) Transition(ctx context.Context, id string, fn func(*task.Task) (task.Event, error)) (task.Task, error) {
	rec, err := m.Store.Transition(ctx, id, fn)
	if err == nil && rec.Notified {
		m.hold(id)
	}
	return rec, err
}

// One run's notification waiting on the store must not hold up another
// run's: the delivery lock is not held across the store write.
func TestNotificationsDoNotWaitForEachOthersStoreWrites(t *testing.T) {
	h := newHarness(t, setup{script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		return reply("answer to " + firstUserText(req)), nil
	}})
	c := h.mainCaller()
	runs := h.ownGroup(&c)
	m := &heldMark{Store: h.svc.cfg.Tasks, entered: make(chan string, 1), release: make(chan struct{})}
	h.svc.cfg.Tasks = m
	h.svc.rewire()
	release := sync.OnceFunc(func() { close(m.release) })
	t.Cleanup(release) // registered last, so run first: before the group's cleanup waits for the runs

	a := h.launchBG(c, "toolu_a", AgentInput{Description: "a", Prompt: "job a"})
	if got := recv(t, m.entered, "run a's flag claimed"); got != a {
		t.Fatalf("the held claim is for %s, want run a (%s)", got, a)
	}
	b := h.launchBG(c, "toolu_b", AgentInput{Description: "b", Prompt: "job b"})
	if text := h.notification(b); !strings.Contains(text, "answer to job b") {
		t.Errorf("run b's notification: %s", text)
	}
	release()
	if text := h.notification(a); !strings.Contains(text, "answer to job a") {
		t.Errorf("run a's notification: %s", text)
	}
	runs.Wait()
	for _, id := range []string{a, b} {
		if !h.record(id).Notified {
			t.Errorf("task %s not marked notified", id)
		}
	}
}
