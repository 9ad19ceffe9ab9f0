package progress

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// Each summary is made in a goroutine: none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// record is one task record, updated by the summarizer.
type record struct {
	mu  sync.Mutex
	rec task.Task
}

func (r *record) UpdateTask(_ context.Context, _ string, fn func(*task.Task) error) (task.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := fn(&r.rec)
	return r.rec, err
}

func (r *record) progress() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec.Progress
}

// toolStep is an assistant message that calls a tool.
func toolStep() loop.Step {
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("t1", "Read", []byte(`{}`))}}
	return loop.Step{Message: msg, Response: &llm.Response{}}
}

// TestSummary (S-F3): once the interval passed, a background run's tool
// call brings a summary from a forked call that shares the run's prefix and
// ends with the directive; its first line, clipped, reaches the record;
// its usage is paid for; a run in the foreground gets none, and nothing
// is asked again before the next interval.
func TestSummary(t *testing.T) {
	var (
		mu    sync.Mutex
		calls []*llm.Request
		paid  int64
		clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	)
	model := &llm.ModelFunc{Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		calls = append(calls, req)
		mu.Unlock()
		r := llm.Reply(llm.Text("reading the files " + strings.Repeat("x", 300) + "\nsecond line dropped"))
		r.Usage.OutputTokens = 7
		return r, nil
	}}
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return clock
	}
	advance := func(d time.Duration) {
		mu.Lock()
		clock = clock.Add(d)
		mu.Unlock()
	}
	rec := &record{rec: task.Task{ID: "t", Status: task.StatusRunning}}
	background := false
	var wg sync.WaitGroup
	z := New(Config{
		TaskID: "t", Tasks: rec, Model: model, Every: time.Minute, Now: now,
		Base:    llm.Request{System: "the run's prompt", Agent: "worker:progress"},
		History: []llm.Message{llm.UserText("do the work")},
		Spent: func(u llm.Usage) {
			mu.Lock()
			paid += u.OutputTokens
			mu.Unlock()
		},
		Background: func() bool { return background }, Go: wg.Go, Log: slog.New(slog.DiscardHandler),
	})
	ctx := t.Context()

	z.Observe(ctx, toolStep()) // too early
	advance(time.Minute)
	z.Observe(ctx, toolStep()) // due, but in the foreground
	wg.Wait()
	if len(calls) != 0 {
		t.Fatalf("%d summaries asked for too early or in the foreground", len(calls))
	}
	background = true
	advance(time.Minute)
	z.Observe(ctx, toolStep())
	wg.Wait()
	z.Observe(ctx, toolStep()) // the interval starts again
	wg.Wait()
	if len(calls) != 1 {
		t.Fatalf("%d summaries asked for, want 1", len(calls))
	}
	req := calls[0]
	if req.System != "the run's prompt" || req.Agent != "worker:progress" || req.Messages[0].Text() != "do the work" {
		t.Errorf("the summary's request does not share the run's prefix: %+v", req)
	}
	if last := req.Messages[len(req.Messages)-1].Text(); !strings.Contains(last, "one short line") {
		t.Errorf("the summary's request ends with %q, not the directive", last)
	}
	got := rec.progress()
	if !strings.HasPrefix(got, "reading the files") || strings.Contains(got, "second line") || len([]rune(got)) != maxLine {
		t.Errorf("progress on the record: %q (%d characters), want its first line clipped to %d", got, len([]rune(got)), maxLine)
	}
	if paid != 7 {
		t.Errorf("paid for %d output tokens, want 7", paid)
	}
}

// TestNoSummaries: a negative interval turns summaries off.
func TestNoSummaries(t *testing.T) {
	if z := New(Config{Every: -1}); z != nil {
		t.Fatal("a summarizer with summaries off")
	}
	var z *Summarizer
	z.Observe(t.Context(), toolStep()) // does nothing
}
