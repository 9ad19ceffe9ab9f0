package subagent

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/crossnode"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// cluster is the harness's Service and a second node sharing its
// records (its own Service, lane and owner id; the same task store and
// session index), with a job queue both work as the real one does: a job
// goes to the first node with a free place, and waits while none has one.
type cluster struct {
	b    *Service
	jobs chan crossnode.Job
	wg   sync.WaitGroup
	errs chan error
}

func (c *cluster) Dispatch(_ context.Context, job crossnode.Job) error {
	c.jobs <- job
	return nil
}

func newCluster(t *testing.T, h *harness, laneB int) *cluster {
	t.Helper()
	sessions := session.NewManager(h.mem, filepath.Join(h.dir, ".state", "sessions"), func() time.Time { return fixedNow }, nil)
	b, err := New(Config{
		Bus: &event.Bus{}, Now: h.svc.cfg.Now, Sessions: sessions, Index: h.mem, Agents: h.agents,
		Settings: config.Subagents{MaxConcurrent: laneB}, Policy: h.policy, Resolve: h.resolve,
		BaseTools: func() []tool.Tool { return h.base }, MainCwd: h.dir, Tasks: h.svc.cfg.Tasks, TaskLists: h.svc.cfg.TaskLists,
		OutputDir: filepath.Join(h.dir, ".state", "tasks-b"), ProgressEvery: -1, Owner: "node-b", Profile: h.svc.cfg.Profile,
		WatchInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.svc.cfg.Owner, h.svc.cfg.WatchInterval = "node-a", 10*time.Millisecond
	h.svc.rewire()
	c := &cluster{b: b, jobs: make(chan crossnode.Job, 16), errs: make(chan error, 16)}
	h.svc.cfg.Dispatch = c
	ctx, cancel := context.WithCancel(context.Background())
	c.wg.Go(func() {
		for job := range c.jobs {
			c.wg.Go(func() { c.errs <- c.work(ctx, job, h.svc, b) })
		}
	})
	t.Cleanup(func() {
		close(c.jobs)
		cancel()
		c.wg.Wait()
		b.Close()
	})
	return c
}

// work runs job on the first node with a free place.
func (c *cluster) work(ctx context.Context, job crossnode.Job, nodes ...*Service) error {
	for {
		for _, n := range nodes {
			if err := n.RunDispatched(ctx, job); !errors.Is(err, crossnode.ErrNoPlace) {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond): // as a queue polls
		}
	}
}

// TestDispatchRunsOnAnotherNode: with its lane full, a node hands a
// background run to another node, which runs it and records it; the
// launching node's parent gets the notification, once.
func TestDispatchRunsOnAnotherNode(t *testing.T) {
	release, holding := make(chan struct{}), make(chan struct{})
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxConcurrent: 1},
		script: func(ctx context.Context, model string, req *llm.Request) (*llm.Response, error) {
			if strings.Contains(firstUserText(req), "hold") {
				close(holding)
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return reply("finished " + firstUserText(req)), nil
		},
	})
	b := newCluster(t, h, 1)
	c := h.mainCaller()
	first := h.mustCall(c, "tu-1", map[string]any{"description": "hold the lane", "prompt": "hold", "run_in_background": true})
	<-holding // node A's one place is taken
	h.mustCall(c, "tu-2", map[string]any{"description": "elsewhere", "prompt": "count", "run_in_background": true})
	if !strings.Contains(resultText(first), "agentId") && !strings.Contains(resultText(first), "async") {
		t.Fatalf("first call: %s", resultText(first))
	}
	ctx := context.Background()
	recs, err := h.svc.cfg.Tasks.ListTasks(ctx, task.Filter{})
	if err != nil || len(recs) != 2 {
		t.Fatalf("tasks = %+v, %v; want 2", recs, err)
	}
	byDesc := map[string]string{}
	for _, r := range recs {
		byDesc[r.Description] = r.ID
	}
	text := h.notification(byDesc["elsewhere"])
	if !strings.Contains(text, "finished count") || !strings.Contains(text, "completed") {
		t.Fatalf("notification = %q", text)
	}
	elsewhere, err := h.svc.cfg.Tasks.GetTask(ctx, byDesc["elsewhere"])
	if err != nil || elsewhere.Owner != "node-b" || elsewhere.Status != task.StatusCompleted || elsewhere.Result != "finished count" || !elsewhere.Notified {
		t.Fatalf("dispatched task = %+v, %v; want completed by node-b with its result, notified", elsewhere, err)
	}
	close(release)
	h.notification(byDesc["hold the lane"])
	if held, _ := h.svc.cfg.Tasks.GetTask(ctx, byDesc["hold the lane"]); held.Owner != "node-a" || held.Status != task.StatusCompleted {
		t.Fatalf("the run that found a free place on node A = %+v, want completed by node-a", held)
	}
	if n := h.svc.cfg.Queue.Len(""); n != 0 {
		t.Fatalf("%d more queue entries for the main agent, want none (one notification each)", n)
	}
	for range 2 {
		if err := <-b.errs; err != nil {
			t.Fatalf("RunDispatched: %v", err)
		}
	}
}

// TestDispatchStop: stopping the stand-in of a run on another node stops
// that run (through its record), and the launching node reports it killed.
func TestDispatchStop(t *testing.T) {
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxConcurrent: 1},
		script: func(ctx context.Context, model string, req *llm.Request) (*llm.Response, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		},
	})
	b := newCluster(t, h, 1)
	c := h.mainCaller()
	h.mustCall(c, "tu-1", map[string]any{"description": "local", "prompt": "a", "run_in_background": true})
	h.mustCall(c, "tu-2", map[string]any{"description": "remote", "prompt": "b", "run_in_background": true})
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var id string
	for id == "" {
		recs, _ := h.svc.cfg.Tasks.ListTasks(ctx, task.Filter{Owner: "node-b", Statuses: []task.Status{task.StatusRunning}})
		if len(recs) == 1 {
			id = recs[0].ID
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the dispatched run never started on node B")
		case <-time.After(5 * time.Millisecond):
		}
	}
	msg, err := h.svc.Stop(ctx, id)
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !strings.Contains(msg, "Asked the process running task") {
		t.Fatalf("Stop said %q", msg)
	}
	if text := h.notification(id); !strings.Contains(text, "killed") {
		t.Fatalf("notification = %q", text)
	}
	rec, err := h.svc.cfg.Tasks.GetTask(ctx, id)
	if err != nil || rec.Status != task.StatusKilled || rec.Owner != "node-b" {
		t.Fatalf("record = %+v, %v; want killed on node-b", rec, err)
	}
	if err := <-b.errs; err != nil {
		t.Fatalf("node B: %v", err)
	}
}

// TestRunDispatchedRefuses: a node with no free place refuses a job, and
// a job whose run ended or was claimed runs nothing.
func TestRunDispatchedRefuses(t *testing.T) {
	h := newHarness(t, setup{subagents: config.Subagents{MaxConcurrent: 1}})
	ctx := context.Background()
	if err := h.svc.RunDispatched(ctx, crossnode.Job{TaskID: "../x", Cwd: h.dir}); err == nil {
		t.Fatal("a job with a bad task id was accepted")
	}
	rec := task.Task{ID: "t1", Kind: task.KindLocalAgent, Status: task.StatusCompleted, Created: fixedNow}
	if err := h.svc.cfg.Tasks.CreateTask(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.RunDispatched(ctx, crossnode.Job{TaskID: "t1", Cwd: h.dir}); err != nil {
		t.Fatalf("an ended run's job: %v, want nil (nothing to do)", err)
	}
	if !h.svc.lane.TryAcquire() {
		t.Fatal("the lane place was not given back")
	}
	defer h.svc.lane.Release()
	if err := h.svc.RunDispatched(ctx, crossnode.Job{TaskID: "t1", Cwd: h.dir}); !errors.Is(err, crossnode.ErrNoPlace) {
		t.Fatalf("full lane: %v, want ErrNoPlace", err)
	}
}

// held keeps the jobs it is given, for a test to run or drop.
type held struct{ jobs chan crossnode.Job }

func (d held) Dispatch(_ context.Context, job crossnode.Job) error {
	d.jobs <- job
	return nil
}

// TestStopUnclaimedDispatchedRun: a dispatched run no node has taken yet
// is killed at once by a stop; its stand-in reports it, and the job, when
// a node fetches it later, runs nothing.
func TestStopUnclaimedDispatchedRun(t *testing.T) {
	h := newHarness(t, setup{})
	h.svc.cfg.Owner, h.svc.cfg.WatchInterval = "node-a", 10*time.Millisecond
	h.svc.rewire()
	d := held{make(chan crossnode.Job, 1)}
	h.svc.cfg.Dispatch = d
	h.mustCall(h.mainCaller(), "tu-1", map[string]any{"description": "never started", "prompt": "x", "run_in_background": true})
	job := <-d.jobs
	ctx := context.Background()
	msg, err := h.svc.Stop(ctx, job.TaskID)
	if err != nil || !strings.Contains(msg, "before any node started it") {
		t.Fatalf("Stop = %q, %v", msg, err)
	}
	if text := h.notification(job.TaskID); !strings.Contains(text, "killed") {
		t.Fatalf("notification = %q", text)
	}
	if err := h.svc.RunDispatched(ctx, job); err != nil {
		t.Fatalf("RunDispatched of the stopped run: %v", err)
	}
	rec, err := h.svc.cfg.Tasks.GetTask(ctx, job.TaskID)
	if err != nil || rec.Status != task.StatusKilled || rec.Owner != "" {
		t.Fatalf("record = %+v, %v; want killed, never owned", rec, err)
	}
	if reqs := h.requestsOf("general-purpose"); len(reqs) != 0 {
		t.Fatalf("the stopped run reached the model %d times", len(reqs))
	}
}

// TestRunDispatchedAfterClose: a closing node passes jobs back for the
// others rather than start runs it would kill at once.
func TestRunDispatchedAfterClose(t *testing.T) {
	h := newHarness(t, setup{})
	h.svc.Close()
	if err := h.svc.RunDispatched(context.Background(), crossnode.Job{TaskID: "t1", Cwd: h.dir}); !errors.Is(err, crossnode.ErrNoPlace) {
		t.Fatalf("RunDispatched after Close = %v, want ErrNoPlace", err)
	}
}

// TestRunDispatchedTwice: a job delivered a second time while its run is
// claimed (River's rescue of a long job) runs nothing, on the node that
// runs it too.
func TestRunDispatchedTwice(t *testing.T) {
	h := newHarness(t, setup{})
	h.svc.cfg.Owner = "node-a"
	h.svc.rewire()
	ctx := context.Background()
	rec := task.Task{ID: "t1", Kind: task.KindLocalAgent, Status: task.StatusRunning, Owner: "node-a", Created: fixedNow}
	if err := h.svc.cfg.Tasks.CreateTask(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.RunDispatched(ctx, crossnode.Job{TaskID: "t1", Cwd: h.dir, CallerAgent: "main"}); err != nil {
		t.Fatalf("RunDispatched = %v, want nil (nothing to do)", err)
	}
	if reqs := h.requestsOf("general-purpose"); len(reqs) != 0 {
		t.Fatalf("the claimed run started again: %d model calls", len(reqs))
	}
	if got, _ := h.svc.cfg.Tasks.GetTask(ctx, "t1"); got.Status != task.StatusRunning || got.Error != "" {
		t.Fatalf("the running run's record was touched: %+v", got)
	}
}

// TestDispatchedRunFiguresReachTheStandIn: while a run goes on on node B,
// the launching node's stand-in shows its tool uses and newest text, and
// announces them (task_progress), from the figures B's heartbeat records.
func TestDispatchedRunFiguresReachTheStandIn(t *testing.T) {
	release, waiting, holding := make(chan struct{}), make(chan struct{}), make(chan struct{})
	h := newHarness(t, setup{
		subagents: config.Subagents{MaxConcurrent: 1},
		script: func(ctx context.Context, model string, req *llm.Request) (*llm.Response, error) {
			switch {
			case strings.Contains(firstUserText(req), "hold"):
				close(holding)
				<-ctx.Done()
				return nil, ctx.Err()
			case turn(req) == 0:
				return replyBlocks(llm.Text("Reading a.go first."), use("toolu_r", "Read", fakeIn{FilePath: "a.go"})), nil
			}
			close(waiting)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return reply("done reading"), nil
		},
	})
	newCluster(t, h, 1)
	events := h.collect()
	c := h.mainCaller()
	h.mustCall(c, "tu-1", map[string]any{"description": "hold", "prompt": "hold", "run_in_background": true})
	// The stand-in's figures change when the record does (the watch, or
	// its poll): waited for with a deadline.
	until := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(waitFor)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("never: %s; runs %+v", what, h.group.Runs())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	<-holding // node A's one place is taken: the next run goes to node B
	h.mustCall(c, "tu-2", map[string]any{"description": "reader", "prompt": "read it", "run_in_background": true})
	<-waiting
	var seen Run
	until("the stand-in shows the run's tool use and text", func() bool {
		for _, r := range h.group.Runs() {
			if r.Description == "reader" {
				seen = r
			}
		}
		return seen.ToolUses == 1 && seen.Result == "Reading a.go first."
	})
	if seen.Status != task.StatusRunning {
		t.Fatalf("stand-in %+v, want running", seen)
	}
	close(release)
	h.notification(seen.ID)
	progress := 0
	for _, ev := range events.stop(t) {
		if ev.Task != nil && ev.Task.TaskID == seen.ID && ev.Subtype == event.SubtypeTaskProgress && ev.Task.Usage.ToolUses == 1 {
			progress++
		}
	}
	if progress == 0 {
		t.Error("no task_progress line for the run on node B reached node A's bus")
	}
}
