package archive

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// moved is Transcripts that renames by name alone, counting the moves.
type moved struct {
	mu    sync.Mutex
	moves []string
}

func (m *moved) ArchiveTranscript(_ context.Context, info session.Info, at time.Time) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.moves = append(m.moves, info.ID)
	return fmt.Sprintf("%s.deleted.%d", info.TranscriptPath, at.Unix()), nil
}

// tasks is the task records the sweep reads, in memory.
type tasks struct {
	mu   sync.Mutex
	recs map[string]task.Task
}

func (ts *tasks) GetTask(_ context.Context, id string) (task.Task, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if rec, ok := ts.recs[id]; ok {
		return rec, nil
	}
	return task.Task{}, fmt.Errorf("task %s: %w", id, task.ErrNotFound)
}

func (ts *tasks) UpdateTask(_ context.Context, id string, fn func(*task.Task) error) (task.Task, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	rec := ts.recs[id]
	err := fn(&rec)
	ts.recs[id] = rec
	return rec, err
}

// ListTasks keeps what the sweep's filter asks for: ended in one of its
// statuses before its cutoff, not archived.
func (ts *tasks) ListTasks(_ context.Context, f task.Filter) ([]task.Task, error) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var out []task.Task
	for _, id := range slices.Sorted(maps.Keys(ts.recs)) {
		rec := ts.recs[id]
		if slices.Contains(f.Statuses, rec.Status) && rec.Finished.Before(f.FinishedBefore) && !(f.Unarchived && rec.Archived) {
			out = append(out, rec)
		}
	}
	return out, nil
}

// TestSweep (S-S3): the sweep archives, archiveAfterMinutes after they
// ended, the child sessions of background tasks (marking their records)
// and of foreground runs (which have none); it leaves alone what is too
// recent, a timed-out run, a run live in this process and a main session,
// and archives nothing twice.
func TestSweep(t *testing.T) {
	ctx := t.Context()
	ended := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	idx := session.NewMem()
	for _, in := range []session.Info{
		{ID: "bg", ParentID: "main", Status: session.StatusCompleted},
		{ID: "fg", ParentID: "main", Status: session.StatusCompleted},
		{ID: "late", ParentID: "main", Status: session.StatusCompleted},
		{ID: "timeout", ParentID: "main", Status: session.StatusKilled},
		{ID: "live", ParentID: "main", Status: session.StatusCompleted},
		{ID: "main", Status: session.StatusCompleted},
	} {
		in.TranscriptPath, in.Created, in.Updated = "/t/"+in.ID+".jsonl", ended, ended
		if in.ID == "late" {
			in.Updated = ended.Add(time.Hour)
		}
		if err := idx.CreateSession(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	ts := &tasks{recs: map[string]task.Task{
		"bg":      {ID: "bg", ChildSessionID: "bg", Status: task.StatusCompleted, Finished: ended},
		"timeout": {ID: "timeout", ChildSessionID: "timeout", Status: task.StatusTimeout, Finished: ended},
		"live":    {ID: "live", ChildSessionID: "live", Status: task.StatusCompleted, Finished: ended},
	}}
	tr := &moved{}
	a := Archiver{Index: idx, Transcripts: tr, Tasks: ts, Live: func(id string) bool { return id == "live" }, After: 30 * time.Minute}

	if n, err := a.Sweep(ctx, ended.Add(29*time.Minute)); err != nil || n != 0 {
		t.Fatalf("early sweep archived %d (%v), want 0", n, err)
	}
	n, err := a.Sweep(ctx, ended.Add(31*time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("sweep archived %d (%v), want 2", n, err)
	}
	if want := []string{"bg", "fg"}; !slices.Equal(tr.moves, want) {
		t.Errorf("archived %v, want %v", tr.moves, want)
	}
	if rec, _ := ts.GetTask(ctx, "bg"); !rec.Archived {
		t.Error("the background task's record is not marked archived")
	}
	for _, id := range []string{"bg", "fg"} {
		if info, _ := idx.GetSession(ctx, id); !session.Archived(info.TranscriptPath) {
			t.Errorf("the index of %s points at %s, not the archived transcript", id, info.TranscriptPath)
		}
	}
	if n, _ := a.Sweep(ctx, ended.Add(31*time.Minute)); n != 0 {
		t.Errorf("a second sweep archived %d", n)
	}
}

// TestArchiveLeavesAResumedSession: a session running again since it
// finished is not archived (cleanup "delete" of a run resumed at once).
func TestArchiveLeavesAResumedSession(t *testing.T) {
	ctx := t.Context()
	idx := session.NewMem()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	idx.CreateSession(ctx, session.Info{ID: "c", ParentID: "main", Status: session.StatusRunning, TranscriptPath: "/t/c.jsonl", Created: now, Updated: now})
	tr := &moved{}
	a := Archiver{Index: idx, Transcripts: tr, Tasks: &tasks{recs: map[string]task.Task{}}, Live: func(string) bool { return false }}
	if err := a.Archive(ctx, "c", "c", now); err != nil || len(tr.moves) != 0 {
		t.Fatalf("archive of a running session: %v, moved %v", err, tr.moves)
	}
}
