package subagent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// TestProgressSummaryReachesTheRecord: a background run that calls a tool
// gets a one-line progress summary from a forked run (S-F3), kept on its
// task record for TaskList and cadre tasks.
func TestProgressSummaryReachesTheRecord(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	clock := fixedNow
	h := newHarness(t, setup{
		progressEvery: time.Second,
		// Every reading is a second later: a summary is always due.
		now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			clock = clock.Add(time.Second)
			return clock
		},
		script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
			switch {
			case strings.HasSuffix(req.Agent, ":progress"):
				if !strings.Contains(req.Messages[len(req.Messages)-1].Text(), "one short line") {
					t.Errorf("progress request does not end with the directive")
				}
				return reply("PROGRESS: reading the files\nsecond line dropped"), nil
			case turn(req) == 0:
				return replyBlocks(use("t1", "Read", map[string]any{"file_path": "a.go"})), nil
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return reply("done"), nil
		},
	})
	progressed := &progressStore{Store: h.svc.cfg.Tasks, seen: make(chan string, 1)}
	h.svc.cfg.Tasks = progressed
	h.svc.rewire()
	c := h.mainCaller()
	h.mustCall(c, "toolu_bg", AgentInput{Description: "bg", Prompt: "work", RunInBackground: true})
	select {
	case p := <-progressed.seen:
		if p != "PROGRESS: reading the files" {
			t.Errorf("progress %q", p)
		}
	case <-time.After(waitFor):
		t.Fatal("no progress summary was recorded")
	}
	list := mustInvokeTool(t, h.svc.Tools(c), "TaskList", c, TaskListInput{StatusFilter: "running"})
	if !strings.Contains(resultText(list), "progress: PROGRESS: reading the files") {
		t.Errorf("TaskList does not show the progress:\n%s", resultText(list))
	}
	close(release)
}

// progressStore reports the first progress line written to a record.
type progressStore struct {
	task.Store
	seen chan string
}

func (p *progressStore) UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	rec, err := p.Store.UpdateTask(ctx, id, fn)
	if err == nil && rec.Progress != "" {
		select {
		case p.seen <- rec.Progress:
		default:
		}
	}
	return rec, err
}
