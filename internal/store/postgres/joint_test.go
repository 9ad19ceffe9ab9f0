package postgres

import (
	"errors"
	"fmt"
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

// TestCreateSessionTaskInbox: a child's records and its inbox are written
// together, in one round trip: a message pushed once the task is recorded
// is queued; a failed create leaves no inbox open either.
func TestCreateSessionTaskInbox(t *testing.T) {
	proxy, url := newProxy(t, pg.URL(t))
	db := open(t, url)
	ctx := t.Context()
	mb := db.Mailbox()
	if !mb.Shares(db) || mb.Shares(open(t, url)) || mb.Shares(nil) {
		t.Fatal("Shares: want true for its own DB only")
	}
	for i := range 2 {
		id := fmt.Sprintf("c%d", i)
		proxy.count()
		if err := db.CreateSessionTaskInbox(ctx, info(id), tasktest.Sample(id), "owner-1"); err != nil {
			t.Fatal(err)
		}
		// The first prepares the statement on its connection.
		if n := proxy.count(); i > 0 && n != 1 {
			t.Errorf("CreateSessionTaskInbox took %d round trips, want 1", n)
		}
		if ok, err := mb.Push(ctx, msgFor(id)); !ok || err != nil {
			t.Fatalf("push to the inbox the create opened: %v, %v; want queued", ok, err)
		}
	}
	if _, err := db.GetSession(ctx, "c0"); err != nil {
		t.Errorf("the session: %v", err)
	}

	// The task's id is taken: no session, no inbox.
	err := db.CreateSessionTaskInbox(ctx, info("s-new"), tasktest.Sample("c0"), "owner-1")
	if err == nil || !strings.Contains(err.Error(), "a task with this id already exists") {
		t.Fatalf("CreateSessionTaskInbox with a taken task id: err = %v", err)
	}
	if _, err := db.GetSession(ctx, "s-new"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("the session of a failed create was stored (err = %v)", err)
	}
	sample := tasktest.Sample("t-new")
	sample.ID = "t-new"
	if err := db.CreateSessionTaskInbox(ctx, info("c1"), sample, "owner-1"); err == nil {
		t.Fatal("CreateSessionTaskInbox with a taken session id succeeded")
	}
	if ok, err := mb.Push(ctx, msgFor("t-new")); ok || err != nil {
		t.Errorf("push to the inbox of a failed create: %v, %v; want refused", ok, err)
	}
}
