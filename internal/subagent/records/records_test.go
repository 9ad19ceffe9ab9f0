package records

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/sqlite"
	"github.com/cadre-dev/cadre/internal/subagent/runs"
	"github.com/cadre-dev/cadre/internal/task"
)

var now = time.Date(2026, 11, 29, 8, 0, 0, 0, time.UTC)

func rec(id string, status task.Status) task.Task {
	return task.Task{ID: id, Kind: task.KindLocalAgent, Agent: "worker", Status: status, RootSessionID: "root",
		ParentSessionID: "root", ChildSessionID: id, Owner: "p1", Heartbeat: now, Created: now}
}

// TestSeparateStores: with sessions and tasks in different stores every
// record is written on its own; a continued agent's record is reused,
// reset, keeping when it was first created.
func TestSeparateStores(t *testing.T) {
	ctx := context.Background()
	tasks := task.NewMem()
	w := New(tasks, session.NewMem(), nil, "p1", slog.New(slog.DiscardHandler))
	if w.Joint() || w.OpensInboxes() {
		t.Fatal("separate stores taken for a joint one")
	}
	if err := w.Start(ctx, rec("a1", task.StatusRunning), nil, false); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := w.PointOutput(ctx, "a1", "/tmp/a1.output"); err != nil {
		t.Fatalf("PointOutput: %v", err)
	}
	if err := w.End(ctx, "a1", nil, func(r *task.Task) (task.Event, error) { r.Result = "done"; return task.EventComplete, nil }); err != nil {
		t.Fatalf("End: %v", err)
	}
	again := rec("a1", task.StatusPending)
	again.Created = now.Add(time.Hour)
	if err := w.Start(ctx, again, nil, false); err != nil {
		t.Fatalf("Start of the continued agent: %v", err)
	}
	got, err := tasks.GetTask(ctx, "a1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != task.StatusPending || !got.Created.Equal(now) || got.Result != "" {
		t.Errorf("the continued agent's record = status %s, created %v, result %q; want pending, created %v, reset", got.Status, got.Created, got.Result, now)
	}
	if err := w.End(ctx, "a2", nil, func(*task.Task) (task.Event, error) { return task.EventComplete, nil }); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("End of an unknown run = %v, want ErrNotFound", err)
	}
}

// TestJointStore: on one SQLite store a child's session is recorded in the
// write that records its task, and its held end in the write of the task's.
func TestJointStore(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "cadre.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m := session.NewManager(db, t.TempDir(), func() time.Time { return now }, nil)
	w := New(db, m.Index(), nil, "p1", slog.New(slog.DiscardHandler))
	if !w.Joint() || w.OpensInboxes() {
		t.Fatalf("Joint %v, OpensInboxes %v on SQLite without a shared mailbox", w.Joint(), w.OpensInboxes())
	}
	sess, err := m.Prepare(session.Info{ID: "c1", ParentID: "root", Agent: "worker"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetSession(ctx, "c1"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("a prepared session is recorded before its task: %v", err)
	}
	if err := w.Start(ctx, rec("c1", task.StatusRunning), sess, false); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if !sess.IsRecorded() {
		t.Fatal("the session is not marked recorded")
	}
	if _, err := db.GetSession(ctx, "c1"); err != nil {
		t.Fatalf("the session was not recorded with its task: %v", err)
	}
	ended := func(in *session.Info) error { in.Status = session.StatusCompleted; return nil }
	if err := w.End(ctx, "c1", ended, func(*task.Task) (task.Event, error) { return task.EventComplete, nil }); err != nil {
		t.Fatalf("End: %v", err)
	}
	info, err := db.GetSession(ctx, "c1")
	if err != nil || info.Status != session.StatusCompleted {
		t.Errorf("the session's end = %v, %v; want completed", info.Status, err)
	}
	// A refused end of the task still records the session's.
	sess2, _ := m.Prepare(session.Info{ID: "c2", ParentID: "root", Agent: "worker"})
	if err := w.Start(ctx, rec("c2", task.StatusRunning), sess2, false); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	if err := w.End(ctx, "c2", ended, func(*task.Task) (task.Event, error) { return "", refused }); !errors.Is(err, refused) {
		t.Fatalf("End = %v, want the refusal", err)
	}
	if info, err := db.GetSession(ctx, "c2"); err != nil || info.Status != session.StatusCompleted {
		t.Errorf("the session's end was lost with the task's: %v, %v", info.Status, err)
	}
}

func TestTaskAndSession(t *testing.T) {
	started := now.Add(-time.Second)
	info := runs.Info{ID: "a1", ParentSessionID: "p", RootSessionID: "root", ToolUseID: "toolu_2", AgentCall: "toolu_1",
		AgentType: "worker", Description: "look", Prompt: "look around", Name: "bob", OutputFile: "/o"}
	running := Task(info, task.KindLocalAgent, task.StatusRunning, "p1", now, started)
	if running.ToolUseID != "toolu_1" || running.ChildSessionID != "a1" || !running.Started.Equal(started) || running.Owner != "p1" || !running.Created.Equal(now) {
		t.Errorf("a running run's record = %+v", running)
	}
	if pending := Task(info, task.KindLocalAgent, task.StatusPending, "", now, started); !pending.Started.IsZero() || pending.Owner != "" {
		t.Errorf("a pending, unowned run's record = %+v, want no start and no owner", pending)
	}
	for desc, title := range map[string]string{"  fix the bug ": "fix the bug", "": "(@worker subagent)"} {
		s := Session("c1", "p", "worker", "/w", "anthropic/m", desc)
		if s.Title != title || s.Key != "agent:worker:subagent:c1" || s.ParentID != "p" {
			t.Errorf("Session(description %q) = %+v, want title %q", desc, s, title)
		}
	}
}
