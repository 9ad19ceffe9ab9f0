package postgres

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

// TestJointWrites: a session and a task are written together or not at
// all.
func TestJointWrites(t *testing.T) {
	db := open(t, pg.URL(t))
	ctx := t.Context()

	s, tk := info("s1"), tasktest.Sample("t1")
	if err := db.CreateSessionTask(ctx, s, tk); err != nil {
		t.Fatal(err)
	}
	gs, err := db.GetSession(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	gt, err := db.GetTask(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, gs); diff != "" {
		t.Errorf("session (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tk, gt); diff != "" {
		t.Errorf("task (-want +got):\n%s", diff)
	}

	// The task's id is taken: the new session is not recorded either.
	err = db.CreateSessionTask(ctx, info("s2"), tasktest.Sample("t1"))
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("CreateSessionTask with a taken task id: err = %v", err)
	}
	if _, err := db.GetSession(ctx, "s2"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the session of a failed joint create was stored (err = %v)", err)
	}

	// The session's id is taken: the new task is not recorded either,
	// and the error says which id was.
	err = db.CreateSessionTask(ctx, info("s1"), tasktest.Sample("t2"))
	if err == nil || !strings.Contains(err.Error(), "a session with this id already exists") {
		t.Fatalf("CreateSessionTask with a taken session id: err = %v", err)
	}
	if _, err := db.GetTask(ctx, "t2"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("the task of a failed joint create was stored (err = %v)", err)
	}

	// Both updates are stored together...
	got, err := db.TransitionSessionTask(ctx, "s1", func(s *session.Info) error { s.Status = session.StatusCompleted; return nil },
		"t1", func(t *task.Task) (task.Event, error) { t.Notified = true; return task.EventComplete, nil })
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != task.StatusCompleted || !got.Notified {
		t.Errorf("TransitionSessionTask returned %s notified=%v", got.Status, got.Notified)
	}
	if gs, _ := db.GetSession(ctx, "s1"); gs.Status != session.StatusCompleted {
		t.Errorf("session status %s after the joint update", gs.Status)
	}
	// ...or neither: the task's fn fails after the session's ran.
	boom := errors.New("boom")
	_, err = db.TransitionSessionTask(ctx, "s1", func(s *session.Info) error { s.Title = "changed"; return nil },
		"t1", func(*task.Task) (task.Event, error) { return task.EventFail, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("TransitionSessionTask with a failing task fn: err = %v", err)
	}
	if gs, _ := db.GetSession(ctx, "s1"); gs.Title != s.Title {
		t.Errorf("a failed joint update stored the session's half (title %q)", gs.Title)
	}
	// ...or neither: the task's event is refused (it ended already).
	_, err = db.TransitionSessionTask(ctx, "s1", func(s *session.Info) error { s.Title = "changed"; return nil },
		"t1", func(*task.Task) (task.Event, error) { return task.EventStop, nil })
	if !errors.Is(err, task.ErrTransition) {
		t.Fatalf("TransitionSessionTask stopping a completed task: err = %v, want ErrTransition", err)
	}
	if gs, _ := db.GetSession(ctx, "s1"); gs.Title != s.Title {
		t.Errorf("a refused joint transition stored the session's half (title %q)", gs.Title)
	}
}
