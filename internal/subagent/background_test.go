package subagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runlog"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

// The background lifecycle (DESIGN §7.1 S-L2, §7.2, §7.3, §7.4, §8, §13):
// tasks, the lane, notifications, and the tools that talk to running
// agents. Children that must still be running when the test acts block in
// their model on a gate; every wait has a deadline.

// gate holds model calls until the test lets them go.
type gate struct {
	entered chan string   // "prompt/turn" of each call that reached the gate
	release chan struct{} // one send lets one call go; close lets all go
}

func newGate() *gate {
	return &gate{entered: make(chan string, 256), release: make(chan struct{})}
}

// wait blocks a model call until it is released or its run is cancelled.
func (g *gate) wait(ctx context.Context, req *llm.Request) error {
	g.entered <- fmt.Sprintf("%s/%d", firstUserText(req), turn(req))
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answers is a child's script: every turn waits at g, then answers text.
func (g *gate) answers(text string) script {
	return func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return reply(text), nil
	}
}

// readAfter is a child's script: its first turn waits at g, then calls
// Read; every later turn answers "done".
func (g *gate) readAfter() script {
	return func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if turn(req) > 0 {
			return reply("done"), nil
		}
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return replyBlocks(use("toolu_read", "Read", fakeIn{FilePath: "a.go"})), nil
	}
}

// recv takes one value from ch, failing the test after waitFor.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitFor):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// send hands v to whoever receives on ch, failing the test after waitFor.
func send[T any](t *testing.T, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(waitFor):
		t.Fatalf("timed out handing over %s", what)
	}
}

// eventually polls cond until it holds or waitFor has passed. It is for
// state the code under test has no signal for (a TaskOutput having begun
// to wait), never in place of one.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// ownGroup gives the caller a group of its own, so that the test can wait
// for every run the caller starts to be over (Group.Wait).
func (h *harness) ownGroup(c *Caller) *Group {
	g := NewGroup(context.Background())
	h.t.Cleanup(func() { g.Stop(nil); g.Wait() })
	c.Group = g
	return g
}

// taskTool returns one of the tools that talk to running agents.
func (h *harness) taskTool(c Caller, name string) tool.Tool {
	h.t.Helper()
	for _, t := range h.svc.Tools(c) {
		if t.Info().Name == name {
			return t
		}
	}
	h.t.Fatalf("caller %s has no %s tool", c.Agent, name)
	return nil
}

// use calls a non-spawn tool as the loop would, input checked against its
// schema.
func (h *harness) use(ctx context.Context, c Caller, name string, in any) (tool.Result, error) {
	h.t.Helper()
	tl := h.taskTool(c, name)
	raw := mustJSON(h.t, in)
	set, err := tool.NewSet(tl)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := set.Validate(name, raw); err != nil {
		h.t.Fatalf("input %s does not fit the %s tool's schema: %v", raw, name, err)
	}
	return tl.Call(ctx, envFor(c, "toolu_"+strings.ToLower(name)), raw)
}

func (h *harness) mustUse(c Caller, name string, in any) tool.Result {
	h.t.Helper()
	res, err := h.use(context.Background(), c, name, in)
	if err != nil {
		h.t.Fatalf("%s returned an error: %v", name, err)
	}
	return res
}

// metaOf is a tool result's Meta map.
func metaOf(t *testing.T, res tool.Result) map[string]any {
	t.Helper()
	m, ok := res.Meta.(map[string]any)
	if !ok {
		t.Fatalf("result Meta is %T, want a map; result: %s", res.Meta, resultText(res))
	}
	return m
}

// launchBG starts a background child and returns its id.
func (h *harness) launchBG(c Caller, toolUseID string, in AgentInput) string {
	h.t.Helper()
	in.RunInBackground = true
	res := h.mustCall(c, toolUseID, in)
	if res.IsError {
		h.t.Fatalf("background launch failed: %s", resultText(res))
	}
	if st := metaOf(h.t, res)["status"]; st != "async_launched" {
		h.t.Fatalf("background launch status = %v, want async_launched", st)
	}
	return childID(h.t, res)
}

// record is a task's record, which must exist.
func (h *harness) record(id string) task.Task {
	h.t.Helper()
	rec, err := h.svc.cfg.Tasks.GetTask(context.Background(), id)
	if err != nil {
		h.t.Fatalf("task record: %v", err)
	}
	return rec
}

// running is the live run with this id, which must be in progress.
func (h *harness) running(id string) *liveTask {
	h.t.Helper()
	lt := h.svc.live(id)
	if lt == nil {
		h.t.Fatalf("task %s is not running", id)
	}
	return lt
}

// ended waits until the run has finished and been forgotten.
func ended(t *testing.T, lt *liveTask) {
	t.Helper()
	select {
	case <-lt.Done():
	case <-time.After(waitFor):
		t.Fatalf("run %s never ended", lt.ID)
	}
}

// awaitEntries takes queue entries for target until it has n of them.
func (h *harness) awaitEntries(target string, n int) []queue.Entry {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var got []queue.Entry
	for len(got) < n {
		es, err := h.svc.cfg.Queue.Wait(ctx, target, nil)
		if err != nil {
			h.t.Fatalf("got %d queue entries for %q, want %d: %v", len(got), target, n, err)
		}
		got = append(got, es...)
	}
	return got
}

// notification waits for the one notification the main agent gets next
// and checks that it is about task id.
func (h *harness) notification(id string) string {
	h.t.Helper()
	es := h.awaitEntries("", 1)
	if len(es) != 1 || es[0].TaskID != id || es[0].Mode != queue.ModeNotification {
		h.t.Fatalf("main agent's queue entries = %+v, want one notification of %s", es, id)
	}
	return es[0].Message.Text()
}

func forTask(es []queue.Entry, id string) []queue.Entry {
	var out []queue.Entry
	for _, e := range es {
		if e.TaskID == id {
			out = append(out, e)
		}
	}
	return out
}

// whoKey tags a context with the name of the code that uses it, so the
// store can tell who marked a task notified.
type whoKey struct{}

// markStore remembers, per task, who won the notified flag.
type markStore struct {
	task.Store
	mu   sync.Mutex
	wins map[string][]string
}

func (m *markStore) MarkNotified(ctx context.Context, id string) (bool, error) {
	first, err := m.Store.MarkNotified(ctx, id)
	if first {
		who, _ := ctx.Value(whoKey{}).(string)
		if who == "" {
			who = "runtime"
		}
		m.mu.Lock()
		m.wins[id] = append(m.wins[id], who)
		m.mu.Unlock()
	}
	return first, err
}

// UpdateTask counts the write that records a run's end and claims the
// flag in the same step (deliver.go) as the runtime winning it.
func (m *markStore) UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	var flipped bool
	rec, err := m.Store.UpdateTask(ctx, id, func(t *task.Task) error {
		before := t.Notified
		err := fn(t)
		flipped = !before && t.Notified
		return err
	})
	if err == nil && flipped {
		m.mu.Lock()
		m.wins[id] = append(m.wins[id], "runtime")
		m.mu.Unlock()
	}
	return rec, err
}

// Transition counts the same write, which records the end as an event.
func (m *markStore) Transition(ctx context.Context, id string, fn func(*task.Task) (task.Event, error)) (task.Task, error) {
	var flipped bool
	rec, err := m.Store.Transition(ctx, id, func(t *task.Task) (task.Event, error) {
		before := t.Notified
		ev, err := fn(t)
		flipped = !before && t.Notified
		return ev, err
	})
	if err == nil && flipped {
		m.mu.Lock()
		m.wins[id] = append(m.wins[id], "runtime")
		m.mu.Unlock()
	}
	return rec, err
}

func (m *markStore) winners(id string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.wins[id])
}

func watchMarks(h *harness) *markStore {
	m := &markStore{Store: h.svc.cfg.Tasks, wins: map[string][]string{}}
	h.svc.cfg.Tasks = m
	h.svc.rewire()
	return m
}

// taskOutput calls TaskOutput from a context the store recognises.
func (h *harness) taskOutput(c Caller, in TaskOutputInput) tool.Result {
	h.t.Helper()
	res, err := h.use(context.WithValue(context.Background(), whoKey{}, "TaskOutput"), c, "TaskOutput", in)
	if err != nil {
		h.t.Errorf("TaskOutput returned an error: %v", err)
	}
	return res
}

// TestNotifyOnceUnderRaces (S-N1): a blocking TaskOutput races the end of
// the run it waits for. Whatever the interleaving, exactly one party takes
// the result: the notification, or TaskOutput that saw the terminal state
// before the notification was queued — never both, never neither.
func TestNotifyOnceUnderRaces(t *testing.T) {
	h := newHarness(t, setup{script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		return reply("answer to " + firstUserText(req)), nil
	}})
	marks := watchMarks(h)
	outcomes := map[string]int{}
	for i := range 50 {
		c := h.mainCaller()
		runs := h.ownGroup(&c)
		prompt := fmt.Sprintf("job %d", i)
		id := h.launchBG(c, fmt.Sprintf("toolu_%d", i), AgentInput{Description: "race", Prompt: prompt})
		out := make(chan tool.Result, 1)
		go func() { out <- h.taskOutput(c, TaskOutputInput{TaskID: id, Timeout: new(int(waitFor.Milliseconds()))}) }()
		res := recv(t, out, "TaskOutput")
		runs.Wait() // the run has ended: its notification, if any, is queued

		notes := forTask(h.svc.cfg.Queue.Take(""), id)
		wins := marks.winners(id)
		rec := h.record(id)
		m := metaOf(t, res)
		// The result reaches the agent exactly once: through TaskOutput
		// (it won the flag, or withdrew the queued notification) or through
		// the notification.
		full := strings.Contains(resultText(res), "answer to "+prompt)
		delivered := len(notes)
		if full {
			delivered++
		}
		switch {
		case len(wins) != 1:
			t.Fatalf("iteration %d: MarkNotified won by %v, want exactly one winner", i, wins)
		case !rec.Notified:
			t.Fatalf("iteration %d: record not marked notified", i)
		case m["status"] != "completed":
			t.Fatalf("iteration %d: TaskOutput = %v: %s", i, m["status"], resultText(res))
		case delivered != 1:
			t.Fatalf("iteration %d: the result was delivered %d times (TaskOutput full: %v, notifications: %d)", i, delivered, full, len(notes))
		case wins[0] == "TaskOutput" && len(notes) != 0:
			t.Fatalf("iteration %d: TaskOutput delivered the result, yet %d notifications were queued", i, len(notes))
		}
		outcomes[wins[0]]++
	}
	t.Logf("who delivered the result: %v", outcomes)
}

// TestTaskOutputWithdrawsAQueuedNotification: the notification won the
// flag but the agent has not read it yet; TaskOutput takes it back and
// delivers the result itself, so it arrives once.
func TestTaskOutputWithdrawsAQueuedNotification(t *testing.T) {
	h := newHarness(t, setup{})
	c := h.mainCaller()
	runs := h.ownGroup(&c)
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "quick", Prompt: "work"})
	runs.Wait() // ended and notified; the notification waits in the queue
	if n := h.svc.cfg.Queue.Len(""); n != 1 {
		t.Fatalf("%d entries queued, want the notification", n)
	}
	res := h.taskOutput(c, TaskOutputInput{TaskID: id})
	if !strings.Contains(resultText(res), "done") {
		t.Errorf("TaskOutput = %s; want the result", resultText(res))
	}
	if n := h.svc.cfg.Queue.Len(""); n != 0 {
		t.Errorf("%d entries still queued; the notification should be withdrawn", n)
	}
}

// TestNotifyOnceDeterministic pins the two orders of S-N1: a TaskOutput
// already waiting when the run ends takes the result (no notification);
// one called after the notification leaves it the only one.
func TestNotifyOnceDeterministic(t *testing.T) {
	t.Run("TaskOutput waiting", inBubble(func(t *testing.T) {
		g := newGate()
		h := newHarness(t, setup{script: g.answers("the answer")})
		marks := watchMarks(h)
		c := h.mainCaller()
		id := h.launchBG(c, "toolu_1", AgentInput{Description: "slow", Prompt: "work"})
		recv(t, g.entered, "the child's model call")
		lt := h.running(id)
		out := make(chan tool.Result, 1)
		go func() { out <- h.taskOutput(c, TaskOutputInput{TaskID: id}) }()
		eventually(t, "TaskOutput waits on the run", func() bool { return waitersOf(h.svc, lt) == 1 })
		send(t, g.release, struct{}{}, "the release")
		res := recv(t, out, "TaskOutput")
		ended(t, lt)
		if st := metaOf(t, res)["status"]; st != "completed" || !strings.Contains(resultText(res), "the answer") {
			t.Errorf("TaskOutput = %v: %s", st, resultText(res))
		}
		if n := h.svc.cfg.Queue.Len(""); n != 0 {
			t.Errorf("%d notifications queued, want none: the waiting TaskOutput delivered the result", n)
		}
		if w := marks.winners(id); !slices.Equal(w, []string{"TaskOutput"}) || !h.record(id).Notified {
			t.Errorf("marked notified by %v (record notified: %v), want TaskOutput", w, h.record(id).Notified)
		}
	}))
	t.Run("TaskOutput after the notification was read", inBubble(func(t *testing.T) {
		h := newHarness(t, setup{})
		marks := watchMarks(h)
		c := h.mainCaller()
		runs := h.ownGroup(&c)
		id := h.launchBG(c, "toolu_1", AgentInput{Description: "quick", Prompt: "work"})
		h.notification(id)
		runs.Wait()
		res := h.taskOutput(c, TaskOutputInput{TaskID: id})
		if st := metaOf(t, res)["status"]; st != "completed" || !strings.Contains(resultText(res), "already delivered") || strings.Contains(resultText(res), "done") {
			t.Errorf("TaskOutput = %v: %s; want the status, not the result again", st, resultText(res))
		}
		if n := h.svc.cfg.Queue.Len(""); n != 0 {
			t.Errorf("%d more notifications queued after TaskOutput, want none", n)
		}
		if w := marks.winners(id); !slices.Equal(w, []string{"runtime"}) {
			t.Errorf("marked notified by %v, want the runtime once", w)
		}
	}))
	t.Run("waiting TaskOutput gives up", inBubble(func(t *testing.T) {
		// A waiter that was handed the result but gave up without it (its
		// turn was cancelled) must not lose it: the notification goes out.
		g := newGate()
		h := newHarness(t, setup{script: g.answers("the answer")})
		c := h.mainCaller()
		id := h.launchBG(c, "toolu_1", AgentInput{Description: "slow", Prompt: "work"})
		recv(t, g.entered, "the child's model call")
		lt := h.running(id)
		w := h.svc.desk.Watch(lt)
		send(t, g.release, struct{}{}, "the release")
		ended(t, lt)
		if n := h.svc.cfg.Queue.Len(""); n != 0 {
			t.Fatalf("%d notifications queued while a TaskOutput waits, want none", n)
		}
		w.Leave()
		if text := h.notification(id); !strings.Contains(text, "the answer") {
			t.Errorf("notification after the waiter gave up: %s", text)
		}
		if n := h.svc.cfg.Queue.Len(""); n != 0 {
			t.Errorf("%d more notifications, want none", n)
		}
	}))
}

// holdNotification stops the first run that publishes a task_notification
// event — its notification is queued, the run not yet forgotten — until
// release is called. While it is held nothing else can publish on the bus.
func (h *harness) holdNotification() (held <-chan struct{}, release func()) {
	heldc, resume := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	sub := h.bus.Subscribe(func(e event.Event) bool {
		if e.Type == event.TypeSystem && e.Subtype == "task_notification" && first.CompareAndSwap(false, true) {
			close(heldc)
			<-resume
		}
		return false
	})
	var once sync.Once
	release = func() { once.Do(func() { close(resume) }) }
	h.t.Cleanup(func() { release(); sub.Close() })
	return heldc, release
}

// TestTerminationOrder (S-L6): by the time a notification can be taken
// from the queue, the task's record already holds its terminal status and
// result.
func TestTerminationOrder(t *testing.T) {
	h := newHarness(t, setup{script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		return reply("result of " + firstUserText(req)), nil
	}})
	c := h.mainCaller()
	for i := range 10 {
		seen := make(chan task.Task, 1)
		ctx, cancel := context.WithTimeout(context.Background(), waitFor)
		go func() {
			es, err := h.svc.cfg.Queue.Wait(ctx, "", nil)
			if err != nil || len(es) == 0 {
				seen <- task.Task{}
				return
			}
			// Read the record the moment the entry appears.
			rec, _ := h.svc.cfg.Tasks.GetTask(context.Background(), es[0].TaskID)
			seen <- rec
		}()
		prompt := fmt.Sprintf("job %d", i)
		id := h.launchBG(c, "toolu_1", AgentInput{Description: "order", Prompt: prompt})
		rec := recv(t, seen, "the notification")
		cancel()
		if rec.ID != id || rec.Status != task.StatusCompleted || rec.Result != "result of "+prompt || rec.Finished.IsZero() || !rec.Notified {
			t.Fatalf("iteration %d: when the notification was queued the record was %+v, want %s completed with its result", i, rec, id)
		}
	}
}

// TestLane (S-C2): background runs beyond subagents.maxConcurrent wait,
// pending, and all of them run and notify in the end.
func TestLane(t *testing.T) {
	const n, lane = 20, 3
	g := newGate()
	var cur, most atomic.Int32
	h := newHarness(t, setup{subagents: config.Subagents{MaxConcurrent: lane}, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		now := cur.Add(1)
		defer cur.Add(-1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return reply("done " + firstUserText(req)), nil
	}})
	c := h.mainCaller()
	var ids []string
	for i := range n {
		ids = append(ids, h.launchBG(c, fmt.Sprintf("toolu_%d", i), AgentInput{Description: "lane", Prompt: fmt.Sprint(i)}))
	}
	for range lane {
		recv(t, g.entered, "a child in its model")
	}
	count := func() map[task.Status]int {
		recs, err := h.svc.cfg.Tasks.ListTasks(context.Background(), task.Filter{RootSessionID: h.mainID})
		if err != nil {
			t.Fatal(err)
		}
		out := map[task.Status]int{}
		for _, r := range recs {
			out[r.Status]++
		}
		return out
	}
	if d := cmp.Diff(map[task.Status]int{task.StatusRunning: lane, task.StatusPending: n - lane}, count()); d != "" {
		t.Errorf("statuses with the lane full (-want +got):\n%s", d)
	}
	// A pending run is a place in the lane's queue, not a goroutine.
	if got := runningGoroutines("subagent.(*Service).execute("); got != lane {
		t.Errorf("%d goroutines in a run with %d running and %d pending, want %d", got, lane, n-lane, lane)
	}
	list := resultText(h.mustUse(c, "TaskList", TaskListInput{StatusFilter: "running"}))
	if got := len(strings.Split(list, "\n")); got != n {
		t.Errorf("TaskList running lists %d tasks, want %d (pending ones included):\n%s", got, n, list)
	}
	for range n {
		send(t, g.release, struct{}{}, "a release")
	}
	es := h.awaitEntries("", n)
	for _, id := range ids {
		if got := len(forTask(es, id)); got != 1 {
			t.Errorf("task %s: %d notifications, want 1", id, got)
		}
	}
	if d := cmp.Diff(map[task.Status]int{task.StatusCompleted: n}, count()); d != "" {
		t.Errorf("statuses at the end (-want +got):\n%s", d)
	}
	if m := most.Load(); m != lane {
		t.Errorf("at most %d children ran at once, want %d", m, lane)
	}
}

// TestMaxChildrenPerAgent (S-C2): a spawn past the limit is refused, and
// allowed again once a child has ended.
func TestMaxChildrenPerAgent(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{subagents: config.Subagents{MaxChildrenPerAgent: 2}, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return reply("done"), nil
	}})
	c := h.mainCaller()
	a := h.launchBG(c, "toolu_1", AgentInput{Description: "first", Prompt: "a"})
	b := h.launchBG(c, "toolu_2", AgentInput{Description: "second", Prompt: "b"})
	recv(t, g.entered, "the first child")
	recv(t, g.entered, "the second child")
	for _, bg := range []bool{true, false} {
		res := h.mustCall(c, "toolu_3", AgentInput{Description: "third", Prompt: "c", RunInBackground: bg})
		if text := resultText(res); !res.IsError || !strings.Contains(text, "2 active subagents") || !strings.Contains(text, "maxChildrenPerAgent") {
			t.Errorf("third spawn (background %v) = %q, want a refusal naming the limit", bg, text)
		}
	}
	lta, ltb := h.running(a), h.running(b)
	held, release := h.holdNotification()
	send(t, g.release, struct{}{}, "one release")
	recv(t, held, "a child's notification")
	// Past its notification the child is no longer active, though the run
	// has not been forgotten yet.
	if n := h.group.Active(c.SessionID); n != 1 {
		t.Errorf("%d active children while one announces its end, want 1", n)
	}
	release()
	select {
	case <-lta.Done():
	case <-ltb.Done():
	case <-time.After(waitFor):
		t.Fatal("no child ended")
	}
	res := h.mustCall(c, "toolu_4", AgentInput{Description: "third", Prompt: "c", RunInBackground: true})
	if res.IsError {
		t.Errorf("spawn after a child ended: %s", resultText(res))
	}
	close(g.release)
}

// TestAutoBackground (S-L2): a foreground call lets its run go on in the
// background on request or at its timeout_seconds deadline.
func TestAutoBackground(t *testing.T) {
	t.Run("on request", inBubble(func(t *testing.T) {
		g := newGate()
		h := newHarness(t, setup{script: g.answers("late result")})
		c := h.mainCaller()
		out := make(chan tool.Result, 1)
		go func() { out <- h.mustCall(c, "toolu_1", AgentInput{Description: "slow", Prompt: "work"}) }()
		recv(t, g.entered, "the child's model call")
		if n := h.group.Background(); n != 1 {
			t.Errorf("Background moved %d runs, want 1", n)
		}
		res := recv(t, out, "the foreground call")
		m := metaOf(t, res)
		if m["status"] != "async_launched" || res.IsError {
			t.Fatalf("foreground call after Background = %v: %s", m["status"], resultText(res))
		}
		id := childID(t, res)
		if rec := h.record(id); rec.Status != task.StatusRunning || rec.ToolUseID != "toolu_1" || rec.ChildSessionID != id {
			t.Errorf("record of the backgrounded run = %+v", rec)
		}
		if n := h.group.Background(); n != 0 {
			t.Errorf("a second Background moved %d runs, want 0", n)
		}
		close(g.release)
		note := h.notification(id)
		for _, want := range []string{"<status>completed</status>", "<result>late result</result>", "<tool-use-id>toolu_1</tool-use-id>"} {
			if !strings.Contains(note, want) {
				t.Errorf("notification lacks %s:\n%s", want, note)
			}
		}
		// The same run went on: one model call, one child session.
		if n := len(h.requestsOf("general-purpose")); n != 1 {
			t.Errorf("the child's model was called %d times, want 1", n)
		}
		if list, _ := h.mem.ListSessions(context.Background(), session.Filter{ParentID: &h.mainID}); len(list) != 1 || list[0].ID != id {
			t.Errorf("child sessions = %+v, want only %s", list, id)
		}
	}))
	t.Run("timeout_seconds 0", inBubble(func(t *testing.T) {
		h := newHarness(t, setup{})
		c := h.mainCaller()
		res := h.mustCall(c, "toolu_1", AgentInput{Description: "quick", Prompt: "work", TimeoutSeconds: new(0)})
		if st := metaOf(t, res)["status"]; st != "async_launched" {
			t.Fatalf("timeout_seconds 0: status %v: %s", st, resultText(res))
		}
		if note := h.notification(childID(t, res)); !strings.Contains(note, "<status>completed</status>") {
			t.Errorf("notification: %s", note)
		}
	}))
	t.Run("timeout_seconds 1, done in time", inBubble(func(t *testing.T) {
		h := newHarness(t, setup{})
		c := h.mainCaller()
		res := h.mustCall(c, "toolu_1", AgentInput{Description: "quick", Prompt: "work", TimeoutSeconds: new(1)})
		if st := metaOf(t, res)["status"]; st != "completed" || !strings.HasPrefix(resultText(res), framed("done")) {
			t.Fatalf("timeout_seconds 1 with a quick child: status %v: %s", st, resultText(res))
		}
		if _, err := h.svc.cfg.Tasks.GetTask(context.Background(), childID(t, res)); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("a foreground run left a task record (err %v)", err)
		}
		if n := h.svc.cfg.Queue.Len(""); n != 0 {
			t.Errorf("%d queue entries after a foreground run, want none", n)
		}
	}))
	t.Run("timeout_seconds 1, still running", inBubble(func(t *testing.T) {
		g := newGate()
		h := newHarness(t, setup{script: g.answers("late result")})
		c := h.mainCaller()
		res := h.mustCall(c, "toolu_1", AgentInput{Description: "slow", Prompt: "work", TimeoutSeconds: new(1)})
		if st := metaOf(t, res)["status"]; st != "async_launched" {
			t.Fatalf("timeout_seconds 1 with a blocked child: status %v: %s", st, resultText(res))
		}
		close(g.release)
		if note := h.notification(childID(t, res)); !strings.Contains(note, "late result") {
			t.Errorf("notification: %s", note)
		}
	}))
}

// partialThenBlock answers a child's first call with some text and a tool
// call, then holds its second call at the gate.
func partialThenBlock(g *gate) script {
	return func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if turn(req) == 0 {
			return replyBlocks(llm.Text("partial findings"), use("toolu_read", "Read", fakeIn{FilePath: "a.go"})), nil
		}
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return reply("never"), nil
	}
}

// TestTaskStop (S-T3): stopping a running child kills it and keeps its
// partial result; anything else is an error.
func TestTaskStop(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{script: partialThenBlock(g)})
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "long job", Prompt: "work"})
	recv(t, g.entered, "the child's second model call")
	res := h.mustUse(c, "TaskStop", TaskStopInput{TaskID: id})
	if res.IsError || !strings.Contains(resultText(res), "Stopped task "+id) {
		t.Fatalf("TaskStop = %s", resultText(res))
	}
	rec := h.record(id)
	if rec.Status != task.StatusKilled || rec.Result != "partial findings" || !strings.Contains(rec.Error, "TaskStop") {
		t.Errorf("record after TaskStop: status %s, result %q, error %q", rec.Status, rec.Result, rec.Error)
	}
	note := h.notification(id)
	for _, want := range []string{"<status>killed</status>", `Agent "long job" was stopped`, "partial findings"} {
		if !strings.Contains(note, want) {
			t.Errorf("notification lacks %q:\n%s", want, note)
		}
	}
	tests := []struct {
		name string
		in   TaskStopInput
		want string
	}{
		{"finished", TaskStopInput{TaskID: id}, "is not running"},
		{"finished, shell_id", TaskStopInput{ShellID: id}, "is not running"},
		{"unknown", TaskStopInput{TaskID: "nosuchtask"}, `no task "nosuchtask"`},
		{"path", TaskStopInput{TaskID: "../x"}, "invalid task_id"},
		{"empty", TaskStopInput{}, "invalid task_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := h.mustUse(c, "TaskStop", tt.in)
			if !res.IsError || !strings.Contains(resultText(res), tt.want) {
				t.Errorf("TaskStop %+v = %q, want an error with %q", tt.in, resultText(res), tt.want)
			}
		})
	}
}

// leadWithGrandchild is a harness whose main agent has launched "lead" in
// the background; the lead's first turn starts a background grandchild,
// and every other model call blocks on the returned gate.
func leadWithGrandchild(t *testing.T) (*harness, *gate, Caller, string) {
	t.Helper()
	g := newGate()
	// The lead is a user's agent: the built-in general-purpose is a leaf.
	h := newHarness(t, setup{subagents: config.Subagents{MaxSpawnDepth: 2}, agents: map[string]string{"lead": agentFile("lead", "Delegates", "", "Lead.")}, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if firstUserText(req) == "lead" && turn(req) == 0 {
			return replyBlocks(use("toolu_gc", "Agent", AgentInput{Description: "grandchild", Prompt: "grandchild", RunInBackground: true})), nil
		}
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return reply("done"), nil
	}})
	c := h.mainCaller()
	lead := h.launchBG(c, "toolu_1", AgentInput{Description: "lead", Prompt: "lead", SubagentType: "lead"})
	return h, g, c, lead
}

// TestStopCascade (S-C4): stopping the group stops every run it started,
// grandchildren included.
func TestStopCascade(t *testing.T) {
	h, g, c, lead := leadWithGrandchild(t)
	other := h.launchBG(c, "toolu_2", AgentInput{Description: "other", Prompt: "other"})
	var at []string
	for range 3 {
		at = append(at, recv(t, g.entered, "a blocked run"))
	}
	slices.Sort(at)
	if d := cmp.Diff([]string{"grandchild/0", "lead/1", "other/0"}, at); d != "" {
		t.Fatalf("blocked model calls (-want +got):\n%s", d)
	}
	gcs, err := h.svc.cfg.Tasks.ListTasks(context.Background(), task.Filter{ParentSessionID: lead})
	if err != nil || len(gcs) != 1 {
		t.Fatalf("grandchild records: %v, %v", gcs, err)
	}
	grandchild := gcs[0].ID

	h.group.Stop(runs.ErrSessionStopped)
	waited := make(chan struct{})
	go func() { h.group.Wait(); close(waited) }()
	recv(t, waited, "the group's runs to end")
	for _, id := range []string{lead, other, grandchild} {
		if rec := h.record(id); rec.Status != task.StatusKilled || rec.Finished.IsZero() {
			t.Errorf("task %s after the stop: status %s, finished %v", id, rec.Status, rec.Finished)
		}
		if h.svc.live(id) != nil {
			t.Errorf("task %s is still live", id)
		}
	}
	main := h.svc.cfg.Queue.Take("")
	if len(main) != 2 || len(forTask(main, lead)) != 1 || len(forTask(main, other)) != 1 {
		t.Errorf("main agent's notifications: %+v, want one each for lead and other", main)
	}
	for _, e := range main {
		if !strings.Contains(e.Message.Text(), "<status>killed</status>") {
			t.Errorf("notification: %s", e.Message.Text())
		}
	}
	// The grandchild's notification goes to its parent, the lead.
	if es := h.svc.cfg.Queue.Take(lead); len(es) != 1 || es[0].TaskID != grandchild {
		t.Errorf("lead's queue: %+v, want the grandchild's notification", es)
	}
}

// TestRunTimeout (S-C3): runTimeoutSeconds ends a run with status timeout.
func TestRunTimeout(t *testing.T) { synctest.Test(t, testRunTimeout) }

func testRunTimeout(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{subagents: config.Subagents{RunTimeoutSeconds: 1}, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		return reply("never"), nil
	}})
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "endless", Prompt: "work"})
	note := h.notification(id)
	for _, want := range []string{"<status>timeout</status>", `Agent "endless" timed out`, "runTimeoutSeconds"} {
		if !strings.Contains(note, want) {
			t.Errorf("notification lacks %q:\n%s", want, note)
		}
	}
	if rec := h.record(id); rec.Status != task.StatusTimeout {
		t.Errorf("record status %s, want timeout", rec.Status)
	}
}

// TestForegroundRunTimeoutNamesTheLimit: a foreground run past its time
// limit is a tool error naming the agent and the limit, and keeps what the
// agent wrote — not the bare "context deadline exceeded" of the child's
// context, which read like the caller's own turn had been cut.
func TestForegroundRunTimeoutNamesTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, setup{subagents: config.Subagents{RunTimeoutSeconds: 1}, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}})
		res, err := h.call(t.Context(), h.mainCaller(), "toolu_1", AgentInput{Description: "slow job", Prompt: "work"})
		if err != nil {
			t.Fatalf("the timed-out foreground call returned an error (%v): the caller's turn would read as interrupted", err)
		}
		text := res.Content[0].Text
		for _, want := range []string{"timed out", "subagents.runTimeoutSeconds (1s) elapsed", "session_id: "} {
			if !res.IsError || !strings.Contains(text, want) {
				t.Errorf("tool result (error %v) lacks %q:\n%s", res.IsError, want, text)
			}
		}
		if strings.Contains(text, "context deadline exceeded") {
			t.Errorf("tool result still says the bare context error:\n%s", text)
		}
	})
}

// lastMessage is the text of a request's last message.
func lastMessage(r recorded) string {
	msgs := r.req.Messages
	if len(msgs) == 0 {
		return ""
	}
	return string(msgs[len(msgs)-1].Role) + ": " + msgs[len(msgs)-1].Text()
}

// TestSendMessage (S-T1): a running agent reads the message at its next
// loop boundary; a finished one is resumed with it, in the background.
//
// With a Mailbox (a shared store's), messages go through it and behave
// the same.
func TestSendMessage(t *testing.T) {
	t.Run("queue", func(t *testing.T) { testSendMessage(t, false) })
	t.Run("mailbox", func(t *testing.T) { testSendMessage(t, true) })
}

func testSendMessage(t *testing.T, mailbox bool) {
	t.Run("running, by name", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, setup{mailbox: mailbox, script: g.readAfter()})
		c := h.mainCaller()
		id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "work", Name: "bob"})
		recv(t, g.entered, "the child's first model call")
		res := h.mustUse(c, "SendMessage", SendMessageInput{To: "bob", Message: "also check the tests", Summary: "extra instruction"})
		if res.IsError || !strings.Contains(resultText(res), "queued for agent "+id) {
			t.Fatalf("SendMessage = %s", resultText(res))
		}
		send(t, g.release, struct{}{}, "the release")
		h.notification(id)
		reqs := h.requestsOf("general-purpose")
		if len(reqs) != 2 {
			t.Fatalf("the child made %d model calls, want 2", len(reqs))
		}
		// After the tool call, never inside it.
		if got := lastMessage(reqs[1]); got != "user: also check the tests" {
			t.Errorf("the child's next request ends with %q", got)
		}
		if lastToolResult(&reqs[1].req) != "Read ran on a.go" {
			t.Errorf("the tool call's result is missing from the next request")
		}
	})
	turns := func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		return reply(fmt.Sprintf("reply %d", turn(req)+1)), nil
	}
	// resumed checks the second run of agent id, which SendMessage (res)
	// resumed; notes are the main agent's notifications of both runs.
	resumed := func(t *testing.T, h *harness, id string, res tool.Result, notes []queue.Entry) {
		t.Helper()
		if res.IsError || !strings.Contains(resultText(res), "resumed in the background") {
			t.Fatalf("SendMessage to a finished agent = %s", resultText(res))
		}
		if len(notes) != 2 || len(forTask(notes, id)) != 2 || !strings.Contains(notes[1].Message.Text(), "<result>reply 2</result>") {
			t.Errorf("notifications of the two runs: %+v", notes)
		}
		reqs := h.requestsOf("general-purpose")
		want := []string{"user: first task", "assistant: reply 1", "user: second task"}
		if d := cmp.Diff(want, exchange(reqs[len(reqs)-1].req.Messages)); d != "" {
			t.Errorf("resumed request (-want +got):\n%s", d)
		}
		rec := h.record(id)
		if rec.Status != task.StatusCompleted || rec.Result != "reply 2" || !rec.Notified || rec.Name != "carl" {
			t.Errorf("reused record: %+v", rec)
		}
		if recs, _ := h.svc.cfg.Tasks.ListTasks(context.Background(), task.Filter{RootSessionID: h.mainID}); len(recs) != 1 {
			t.Errorf("%d task records, want the one, reused", len(recs))
		}
	}
	t.Run("finished", func(t *testing.T) {
		h := newHarness(t, setup{mailbox: mailbox, script: turns})
		c := h.mainCaller()
		runs := h.ownGroup(&c)
		id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "first task", Name: "carl"})
		notes := h.awaitEntries("", 1)
		runs.Wait()
		if h.svc.live(id) != nil {
			t.Fatal("the run is still live after its group's Wait")
		}
		res := h.mustUse(c, "SendMessage", SendMessageInput{To: "carl", Message: "second task", Summary: "follow-up work"})
		resumed(t, h, id, res, append(notes, h.awaitEntries("", 1)...))
	})
	t.Run("while it winds down", func(t *testing.T) {
		// Sent after the run stopped reading messages but before it was
		// forgotten: the message must not be queued for a run that will
		// never read it.
		h := newHarness(t, setup{mailbox: mailbox, script: turns})
		c := h.mainCaller()
		held, release := h.holdNotification()
		id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "first task", Name: "carl"})
		recv(t, held, "the notification")
		out := make(chan tool.Result, 1)
		go func() {
			out <- h.mustUse(c, "SendMessage", SendMessageInput{To: id, Message: "second task", Summary: "follow-up work"})
		}()
		release()
		res := recv(t, out, "SendMessage")
		resumed(t, h, id, res, h.awaitEntries("", 2))
	})
	t.Run("errors", func(t *testing.T) {
		g := newGate()
		h := newHarness(t, setup{mailbox: mailbox, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			return nil, g.wait(ctx, req)
		}})
		c := h.mainCaller()
		dora := h.launchBG(c, "toolu_1", AgentInput{Description: "secret work", Prompt: "work", Name: "dora"})
		other := h.mainCaller()
		other.RootSessionID, other.SessionID = "main-session-2", "main-session-2"
		tests := []struct {
			name string
			c    Caller
			in   SendMessageInput
			want string
		}{
			{"unknown", c, SendMessageInput{To: "nobody", Message: "hi", Summary: "greeting"}, `cannot reach agent "nobody"`},
			{"another tree's name", other, SendMessageInput{To: "dora", Message: "hi", Summary: "greeting"}, `cannot reach agent "dora"`},
			{"no summary", c, SendMessageInput{To: "dora", Message: "hi"}, "summary is required"},
			{"no message", c, SendMessageInput{To: "dora", Summary: "greeting"}, "message is empty"},
			{"no target", c, SendMessageInput{Message: "hi", Summary: "greeting"}, "to is empty"},
			{"bad id", c, SendMessageInput{To: "../x", Message: "hi", Summary: "greeting"}, "invalid agent id"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := h.mustUse(tt.c, "SendMessage", tt.in)
				text := resultText(res)
				if !res.IsError || !strings.Contains(text, tt.want) {
					t.Errorf("SendMessage %+v = %q, want an error with %q", tt.in, text, tt.want)
				}
				for _, secret := range []string{dora, "secret work", h.mainID} {
					if strings.Contains(text, secret) {
						t.Errorf("the error reveals %q: %s", secret, text)
					}
				}
			})
		}
		if n := h.svc.cfg.Queue.Len(dora); n != 0 {
			t.Errorf("%d messages reached dora, want none", n)
		}
	})
}

// TestTaskListAndOutput (S-T2, S-T4): TaskList's status filters, and
// TaskOutput on a task still running.
func TestTaskListAndOutput(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{script: func(ctx context.Context, m string, req *llm.Request) (*llm.Response, error) {
		switch firstUserText(req) {
		case "ok":
			return reply("ok done"), nil
		case "fail":
			return nil, errors.New("model exploded")
		case "progress":
			return partialThenBlock(g)(ctx, m, req)
		}
		return nil, g.wait(ctx, req)
	}})
	c := h.mainCaller()
	ok := h.launchBG(c, "toolu_1", AgentInput{Description: "fine", Prompt: "ok"})
	fail := h.launchBG(c, "toolu_2", AgentInput{Description: "broken", Prompt: "fail"})
	h.awaitEntries("", 2)
	stop := h.launchBG(c, "toolu_3", AgentInput{Description: "doomed", Prompt: "stop"})
	progress := h.launchBG(c, "toolu_4", AgentInput{Description: "going", Prompt: "progress"})
	at := []string{recv(t, g.entered, "a blocked child"), recv(t, g.entered, "a blocked child")}
	slices.Sort(at)
	if d := cmp.Diff([]string{"progress/1", "stop/0"}, at); d != "" {
		t.Fatalf("blocked model calls (-want +got):\n%s", d)
	}
	if res := h.mustUse(c, "TaskStop", TaskStopInput{TaskID: stop}); res.IsError {
		t.Fatalf("TaskStop: %s", resultText(res))
	}
	for _, rec := range []task.Task{
		{ID: "timed-out-1", RootSessionID: h.mainID, Status: task.StatusTimeout},
		{ID: "elsewhere-1", RootSessionID: "main-session-2", Status: task.StatusCompleted},
	} {
		rec.Kind, rec.Agent, rec.Description = task.KindLocalAgent, "general-purpose", "seeded"
		if err := h.svc.cfg.Tasks.CreateTask(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	listed := func(filter string) []string {
		res := h.mustUse(c, "TaskList", TaskListInput{StatusFilter: filter})
		if res.IsError {
			t.Fatalf("TaskList %q: %s", filter, resultText(res))
		}
		var ids []string
		for _, line := range strings.Split(resultText(res), "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] != "No" {
				ids = append(ids, f[0])
			}
		}
		slices.Sort(ids)
		return ids
	}
	sorted := func(ids ...string) []string { slices.Sort(ids); return ids }
	all := sorted(ok, fail, stop, progress, "timed-out-1")
	tests := []struct {
		filter string
		want   []string
	}{
		{"", all},
		{"all", all},
		{"running", []string{progress}},
		{"completed", []string{ok}},
		{"failed", sorted(fail, "timed-out-1")},
		{"cancelled", []string{stop}},
	}
	for _, tt := range tests {
		if d := cmp.Diff(tt.want, listed(tt.filter)); d != "" {
			t.Errorf("TaskList %q (-want +got):\n%s", tt.filter, d)
		}
	}
	if res := h.mustUse(c, "TaskList", TaskListInput{StatusFilter: "bogus"}); !res.IsError || !strings.Contains(resultText(res), "unknown status_filter") {
		t.Errorf("TaskList bogus = %s", resultText(res))
	}

	// TaskOutput without blocking: the status and the output file so far.
	rec := h.record(progress)
	file, err := os.ReadFile(rec.OutputFile)
	if err != nil {
		t.Fatal(err)
	}
	// The output file is the run's transcript: TaskOutput shows its log.
	rendered, isTranscript := runlog.FromTranscript(file)
	if !isTranscript {
		t.Fatalf("the output file of a run started in the background is not its transcript:\n%s", file)
	}
	for _, block := range []bool{false, true} {
		in := TaskOutputInput{TaskID: progress, Block: new(block)}
		if block {
			in.Timeout = new(20) // waits, then reports the run still going
		}
		res := h.mustUse(c, "TaskOutput", in)
		text := resultText(res)
		m := metaOf(t, res)
		if res.IsError || m["status"] != "running" || m["retrieval_status"] != "timeout" || !strings.Contains(text, "<status>running</status>") {
			t.Errorf("TaskOutput block=%v on a running task = %v: %s", block, m, text)
		}
		for _, want := range []string{"partial findings", "→ Read", "← Read ran on a.go", strings.TrimSpace(rendered)} {
			if !strings.Contains(text, want) {
				t.Errorf("TaskOutput block=%v lacks %q:\n%s", block, want, text)
			}
		}
	}
	for _, tt := range []struct {
		in   TaskOutputInput
		want string
	}{
		{TaskOutputInput{TaskID: "nosuchtask"}, `no task "nosuchtask"`},
		{TaskOutputInput{TaskID: "../x"}, "invalid task_id"},
		{TaskOutputInput{TaskID: progress, Timeout: new(-1)}, "timeout must be between"},
		{TaskOutputInput{TaskID: progress, Timeout: new(600001)}, "timeout must be between"},
	} {
		if res := h.mustUse(c, "TaskOutput", tt.in); !res.IsError || !strings.Contains(resultText(res), tt.want) {
			t.Errorf("TaskOutput %+v = %q, want an error with %q", tt.in, resultText(res), tt.want)
		}
	}
	if h.record(progress).Notified {
		t.Error("TaskOutput on a running task marked it notified")
	}
}

// TestNameRegistry (S-T1): a name belongs to one running agent at a time;
// once it has finished, the name is free and means the newest agent.
func TestNameRegistry(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if turn(req) > 0 {
			return reply("done"), nil
		}
		if err := g.wait(ctx, req); err != nil {
			return nil, err
		}
		if firstUserText(req) == "second" {
			return replyBlocks(use("toolu_read", "Read", fakeIn{FilePath: "a.go"})), nil
		}
		return reply("done"), nil
	}})
	c := h.mainCaller()
	first := h.launchBG(c, "toolu_1", AgentInput{Description: "one", Prompt: "first", Name: "alice"})
	recv(t, g.entered, "the first agent")
	res := h.mustCall(c, "toolu_2", AgentInput{Description: "two", Prompt: "dup", Name: "alice", RunInBackground: true})
	if !res.IsError || !strings.Contains(resultText(res), "taken by agent "+first) {
		t.Errorf("second agent named alice = %s, want a refusal", resultText(res))
	}
	lt := h.running(first)
	send(t, g.release, struct{}{}, "the first agent's release")
	ended(t, lt)
	h.notification(first)

	second := h.launchBG(c, "toolu_3", AgentInput{Description: "two", Prompt: "second", Name: "alice"})
	if second == first {
		t.Fatal("the second agent has the first one's id")
	}
	recv(t, g.entered, "the second agent")
	res = h.mustUse(c, "SendMessage", SendMessageInput{To: "alice", Message: "hello again", Summary: "greeting"})
	if res.IsError || !strings.Contains(resultText(res), "queued for agent "+second) {
		t.Errorf("SendMessage to alice = %s, want it queued for %s", resultText(res), second)
	}
	send(t, g.release, struct{}{}, "the second agent's release")
	h.notification(second)
	reqs := h.requestsOf("general-purpose")
	if got := lastMessage(reqs[len(reqs)-1]); got != "user: hello again" {
		t.Errorf("the newest alice's last request ends with %q", got)
	}
}

// TestNameReservedAcrossConcurrentSpawns: two calls in one assistant
// message (run in parallel) may not both take a name.
func TestNameReservedAcrossConcurrentSpawns(t *testing.T) {

	h := newHarness(t, setup{})
	inPool, resume := make(chan struct{}), make(chan struct{})
	base := h.svc.cfg.BaseTools
	var first atomic.Bool
	h.svc.cfg.BaseTools = func() []tool.Tool {
		// The first spawn stops after its name check, before its record.
		if first.CompareAndSwap(false, true) {
			close(inPool)
			<-resume
		}
		return base()
	}
	c := h.mainCaller()
	out := make(chan tool.Result, 1)
	go func() {
		out <- h.mustCall(c, "toolu_1", AgentInput{Description: "one", Prompt: "a", Name: "alice", RunInBackground: true})
	}()
	recv(t, inPool, "the first spawn")
	second := h.mustCall(c, "toolu_2", AgentInput{Description: "two", Prompt: "b", Name: "alice", RunInBackground: true})
	close(resume)
	res := recv(t, out, "the first spawn")
	if !res.IsError && !second.IsError {
		t.Errorf("both concurrent spawns named alice were launched: %s / %s", childID(t, res), childID(t, second))
	}
}

// TestDrainAnswersNotifications (S-Q2): a main agent that launched a background child and
// ended its turn gets a new turn with the notification, and Drain
// returns only after it.
func TestDrainAnswersNotifications(t *testing.T) {
	firstTurn := make(chan struct{})
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if req.Agent != "main" {
			// The child ends only once the main agent's turn is over.
			select {
			case <-firstTurn:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return reply("child result"), nil
		}
		switch turn(req) {
		case 0:
			return replyBlocks(use("toolu_bg", "Agent", AgentInput{Description: "background work", Prompt: "work", RunInBackground: true})), nil
		case 1:
			return reply("launched; waiting"), nil
		}
		return reply("got the result"), nil
	}})
	ctx := context.Background()
	sess, err := h.sessions.Create(ctx, session.Info{Agent: "main", Cwd: h.dir, Title: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c := h.mainCaller()
	c.RootSessionID, c.SessionID = sess.Info.ID, sess.Info.ID
	all, err := tool.NewSet(append(slices.Clone(h.base), h.svc.Tools(c)...)...)
	if err != nil {
		t.Fatal(err)
	}
	conv := runner.Start(runner.Spec{
		Session: sess,
		Loop: loop.Config{
			Model: c.Model, System: "You are the main agent.", Tools: h.policy.Pool(all), Permit: &h.policy, Agent: "main",
			Env: tool.Env{Cwd: h.dir, SessionID: sess.Info.ID},
		},
		Tag: runner.Tag{RootSessionID: sess.Info.ID}, Totals: c.Totals, Bus: h.bus, Now: func() time.Time { return fixedNow },
	}, nil)
	var results []string
	res := conv.Drain(ctx, []llm.Message{llm.UserText("delegate it")}, h.svc.Pending(c), func(r *runner.Result) {
		results = append(results, r.Result)
		if len(results) == 1 {
			close(firstTurn)
		}
	})
	if err := conv.Close(""); err != nil {
		t.Fatal(err)
	}
	if res.Err != nil || res.Result != "got the result" {
		t.Fatalf("Drain ended with %q (err %v)", res.Result, res.Err)
	}
	if d := cmp.Diff([]string{"launched; waiting", "got the result"}, results); d != "" {
		t.Errorf("turns (-want +got):\n%s", d)
	}
	reqs := h.requestsOf("main")
	if len(reqs) != 3 {
		t.Fatalf("main made %d model calls, want 3", len(reqs))
	}
	last := lastMessage(reqs[2])
	if !strings.HasPrefix(last, "user: <task-notification>") || !strings.Contains(last, "<result>child result</result>") {
		t.Errorf("the new turn's input: %s", last)
	}
	if h.group.HasRunning("") {
		t.Errorf("background runs left after Drain: %d", h.group.BackgroundRunning())
	}
}

// TestStopPending: a run stopped while it waits for the lane ends killed,
// like a running one, not failed.
func TestStopPending(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{subagents: config.Subagents{MaxConcurrent: 1}, script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		return nil, g.wait(ctx, req)
	}})
	c := h.mainCaller()
	h.launchBG(c, "toolu_1", AgentInput{Description: "holds the lane", Prompt: "a"})
	recv(t, g.entered, "the first child")
	waiting := h.launchBG(c, "toolu_2", AgentInput{Description: "waits", Prompt: "b"})
	if st := h.record(waiting).Status; st != task.StatusPending {
		t.Fatalf("second child is %s, want pending", st)
	}
	if res := h.mustUse(c, "TaskStop", TaskStopInput{TaskID: waiting}); res.IsError {
		t.Fatalf("TaskStop of a pending task: %s", resultText(res))
	}
	if rec := h.record(waiting); rec.Status != task.StatusKilled || !strings.Contains(rec.Error, "TaskStop") {
		t.Errorf("stopped pending task: status %s, error %q; want killed by TaskStop", rec.Status, rec.Error)
	}
	if note := h.notification(waiting); !strings.Contains(note, "<status>killed</status>") {
		t.Errorf("notification: %s", note)
	}
	if n := len(h.requestsOf("general-purpose")); n != 1 {
		t.Errorf("%d child model calls, want 1: the stopped task never ran", n)
	}
}

// TestUsageAcrossTurns: a child that answered a message in a further turn
// reports the usage of its whole run, not of its last turn.
func TestUsageAcrossTurns(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		if turn(req) == 0 {
			if err := g.wait(ctx, req); err != nil {
				return nil, err
			}
			return reply("first answer"), nil
		}
		return reply("second answer"), nil
	}})
	c := h.mainCaller()
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "worker", Prompt: "work"})
	recv(t, g.entered, "the child's model call")
	// Queued during the turn's last model call: it is answered in a new turn.
	if res := h.mustUse(c, "SendMessage", SendMessageInput{To: id, Message: "one more thing", Summary: "follow-up"}); res.IsError {
		t.Fatalf("SendMessage: %s", resultText(res))
	}
	send(t, g.release, struct{}{}, "the release")
	note := h.notification(id)
	if !strings.Contains(note, "<result>second answer</result>") || !strings.Contains(note, "tokens: 30,") {
		t.Errorf("notification after two turns of 15 tokens each:\n%s", note)
	}
	if rec := h.record(id); rec.Usage.Total() != 30 {
		t.Errorf("record usage = %d tokens, want 30", rec.Usage.Total())
	}
}

// readStore signals once a task's record has been read a number of times.
type readStore struct {
	task.Store
	id      string
	after   int
	reads   atomic.Int32
	reached chan struct{}
}

func (r *readStore) GetTask(ctx context.Context, id string) (task.Task, error) {
	rec, err := r.Store.GetTask(ctx, id)
	if id == r.id && r.reads.Add(1) == int32(r.after) {
		close(r.reached)
	}
	return rec, err
}

// TestAnotherProcess (S-X2): tasks whose run is not in this process are
// stopped and awaited through their records, and a run here honours a
// stop requested through its record.
func TestAnotherProcess(t *testing.T) { synctest.Test(t, testAnotherProcess) }

func testAnotherProcess(t *testing.T) {
	g := newGate()
	h := newHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		return nil, g.wait(ctx, req)
	}})
	h.svc.cfg.WatchInterval = time.Millisecond
	h.svc.rewire()
	c := h.mainCaller()
	ctx := context.Background()
	seed := func(id string, st task.Status) {
		t.Helper()
		rec := task.Task{ID: id, Kind: task.KindLocalAgent, Agent: "general-purpose", Description: "elsewhere", RootSessionID: h.mainID, Status: st, Owner: "other-process"}
		if err := h.svc.cfg.Tasks.CreateTask(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	seed("remote-running", task.StatusRunning)
	seed("remote-done", task.StatusCompleted)

	res := h.mustUse(c, "TaskStop", TaskStopInput{TaskID: "remote-running"})
	if res.IsError || !strings.Contains(resultText(res), "Asked the process running task remote-running") {
		t.Errorf("TaskStop of another process's task = %s", resultText(res))
	}
	if !h.record("remote-running").CancelRequested {
		t.Error("the stop request was not recorded")
	}
	if res := h.mustUse(c, "TaskStop", TaskStopInput{TaskID: "remote-done"}); !res.IsError || !strings.Contains(resultText(res), "is not running") {
		t.Errorf("TaskStop of a finished task elsewhere = %s", resultText(res))
	}

	// A blocking TaskOutput follows the record until the other process
	// records the end, then takes the result.
	polling := &readStore{Store: h.svc.cfg.Tasks, id: "remote-running", after: 2, reached: make(chan struct{})}
	h.svc.cfg.Tasks = polling
	h.svc.rewire()
	out := make(chan tool.Result, 1)
	go func() { out <- h.mustUse(c, "TaskOutput", TaskOutputInput{TaskID: "remote-running"}) }()
	recv(t, polling.reached, "TaskOutput reading the record while it waits")
	if _, err := h.svc.cfg.Tasks.Transition(ctx, "remote-running", func(r *task.Task) (task.Event, error) {
		r.Result = "partial work"
		return task.EventStop, nil
	}); err != nil {
		t.Fatal(err)
	}
	res = recv(t, out, "TaskOutput on another process's task")
	if m := metaOf(t, res); m["status"] != "killed" || !strings.Contains(resultText(res), "partial work") {
		t.Errorf("TaskOutput = %v: %s", m["status"], resultText(res))
	}
	if !h.record("remote-running").Notified {
		t.Error("TaskOutput took the result but did not mark the task notified")
	}

	// A run in this process stops when its record asks it to.
	id := h.launchBG(c, "toolu_1", AgentInput{Description: "local", Prompt: "work"})
	recv(t, g.entered, "the local child")
	if _, err := h.svc.cfg.Tasks.UpdateTask(ctx, id, func(r *task.Task) error {
		r.CancelRequested = true
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if note := h.notification(id); !strings.Contains(note, "<status>killed</status>") {
		t.Errorf("notification of a run stopped through its record: %s", note)
	}
}

// TestContinueOnceAtATime: two continuations of one agent in flight at
// once (parallel Agent calls with one session_id, or SendMessage racing
// one) must not both run it: they would write one transcript together.
func TestContinueOnceAtATime(t *testing.T) {

	h := newHarness(t, setup{})
	c := h.mainCaller()
	first := h.mustCall(c, "toolu_1", AgentInput{Description: "one", Prompt: "first task"})
	id := childID(t, first)
	inPool, resume := make(chan struct{}), make(chan struct{})
	base := h.svc.cfg.BaseTools
	var once atomic.Bool
	h.svc.cfg.BaseTools = func() []tool.Tool {
		// The first continuation stops after its check, before it is tracked.
		if once.CompareAndSwap(false, true) {
			close(inPool)
			<-resume
		}
		return base()
	}
	out := make(chan tool.Result, 1)
	go func() {
		out <- h.mustCall(c, "toolu_2", AgentInput{Description: "two", Prompt: "second task", SessionID: id, RunInBackground: true})
	}()
	recv(t, inPool, "the first continuation")
	second := h.mustCall(c, "toolu_3", AgentInput{Description: "three", Prompt: "third task", SessionID: id, RunInBackground: true})
	close(resume)
	if res := recv(t, out, "the first continuation"); !res.IsError && !second.IsError {
		t.Errorf("both continuations of %s were launched", id)
	}
}

// runningGoroutines counts the goroutines with fn on their stacks.
func runningGoroutines(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return strings.Count(string(buf[:n]), fn)
		}
		buf = make([]byte, 2*len(buf))
	}
}

// TestStartedOnceListed: when a run's task_started event is published it
// is listed already — among this process's runs and in its parent's
// group — so a front end that lists the subagents when it hears of one
// finds it (the web view's /subagents once missed a background run). The
// bus's filter runs as the event is published, before the launch goes on.
func TestStartedOnceListed(t *testing.T) {
	h := newHarness(t, setup{script: func(_ context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		return reply("done: " + firstUserText(req)), nil
	}})
	c := h.mainCaller()
	var mu sync.Mutex
	var problems []string
	started := 0
	sub := h.bus.Subscribe(func(e event.Event) bool {
		if e.Subtype != event.SubtypeTaskStarted || e.Task == nil {
			return false
		}
		id := e.Task.TaskID
		inGroup := false
		for _, r := range h.group.Runs() {
			inGroup = inGroup || r.ID == id
		}
		mu.Lock()
		defer mu.Unlock()
		started++
		if h.svc.Running(id) == nil {
			problems = append(problems, id+" is not among the runs of this process")
		}
		if !inGroup {
			problems = append(problems, id+" is not in its parent's group")
		}
		return false
	})
	defer sub.Close()
	for i := range 3 {
		h.launchBG(c, fmt.Sprintf("toolu_%d", i), AgentInput{Description: "listed", Prompt: fmt.Sprintf("job %d", i)})
	}
	mu.Lock()
	defer mu.Unlock()
	if started != 3 {
		t.Errorf("%d task_started events, want 3", started)
	}
	for _, p := range problems {
		t.Error("at task_started: " + p)
	}
}
