package subagent

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// logs collects what a logger receives.
type logs struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logs) Enabled(context.Context, slog.Level) bool { return true }
func (l *logs) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logs) WithGroup(string) slog.Handler            { return l }
func (l *logs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}

// warned reports whether a warning whose message is msg names the task.
func (l *logs) warned(msg, taskID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.records, func(r slog.Record) bool {
		named := false
		r.Attrs(func(a slog.Attr) bool {
			named = named || (a.Key == "task_id" && a.Value.String() == taskID)
			return true
		})
		return r.Level == slog.LevelWarn && r.Message == msg && named
	})
}

var errDiskFull = errors.New("disk full")

// endlessTasks is a task store that cannot record a task's end.
type endlessTasks struct{ task.Store }

func (s endlessTasks) UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	rec, err := s.Store.GetTask(ctx, id)
	if err != nil {
		return rec, err
	}
	if err := fn(&rec); err != nil {
		return rec, err
	}
	if rec.Status.Terminal() {
		return rec, errDiskFull
	}
	return s.Store.UpdateTask(ctx, id, fn)
}

// Transition fails every event that would end the task.
func (s endlessTasks) Transition(ctx context.Context, id string, fn func(*task.Task) (task.Event, error)) (task.Task, error) {
	rec, err := s.Store.GetTask(ctx, id)
	if err != nil {
		return rec, err
	}
	ev, err := fn(&rec)
	if err != nil {
		return rec, err
	}
	if ev != "" {
		if next, aerr := task.Apply(rec, ev); aerr == nil && next.Status.Terminal() {
			return rec, errDiskFull
		}
	}
	return s.Store.Transition(ctx, id, fn)
}

// unarchivable is a session index whose records cannot be changed.
type unarchivable struct{ session.Index }

func (unarchivable) UpdateSession(context.Context, string, func(*session.Info) error) error {
	return errDiskFull
}

// TestFailedWritesAreLogged: a best-effort write that fails is not
// returned to anyone, so it is logged as a warning naming the task.
func TestFailedWritesAreLogged(t *testing.T) {
	tests := []struct {
		name    string
		su      setup
		breakIt func(h *harness)
		msg     string
	}{
		{"the task's end", setup{}, func(h *harness) { h.svc.cfg.Tasks = endlessTasks{h.svc.cfg.Tasks}; h.svc.rewire() },
			"record a background task's end; its parent is not notified"},
		{"the archive of cleanup: delete", setup{subagents: config.Subagents{Cleanup: "delete"}}, func(h *harness) { h.svc.cfg.Index = unarchivable{h.svc.cfg.Index} },
			"archive a finished child session (cleanup: delete)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := &logs{}
			tt.su.logger = slog.New(got)
			h := newHarness(t, tt.su)
			tt.breakIt(h)
			c := h.mainCaller()
			runs := h.ownGroup(&c)
			id := h.launchBG(c, "toolu_1", AgentInput{Description: "work", Prompt: "work"})
			runs.Wait()
			if !got.warned(tt.msg, id) {
				t.Errorf("no warning %q for task %s; logged: %v", tt.msg, id, got.records)
			}
		})
	}
}
