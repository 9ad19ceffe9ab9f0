package archive

import (
	"context"
	"errors"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// Transcripts moves a finished transcript out of the way: session.Manager.
type Transcripts interface {
	ArchiveTranscript(ctx context.Context, info session.Info, at time.Time) (string, error)
}

// Tasks is what the archiver needs of the task store.
type Tasks interface {
	GetTask(ctx context.Context, id string) (task.Task, error)
	UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error)
	ListTasks(ctx context.Context, f task.Filter) ([]task.Task, error)
}

// Archiver archives the child sessions of one runtime.
type Archiver struct {
	Index       session.Index
	Transcripts Transcripts
	Tasks       Tasks
	// Live reports whether a run of id is in progress in this process:
	// the sweep leaves it alone.
	Live func(id string) bool
	// After is how long after its end a child session is swept.
	After time.Duration
}

// Archive moves a finished child session's transcript out of the way: a
// file is renamed to *.deleted.<timestamp>, kept on disk; a transcript in
// a store is marked so (session.Manager.ArchiveTranscript). The index
// follows, so the agent can still be resumed from it. taskID, if not "",
// is the task whose record is marked archived. A session running again
// (resumed since it finished) is left alone.
func (a Archiver) Archive(ctx context.Context, taskID, sessionID string, now time.Time) error {
	info, err := a.Index.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	if info.Status == session.StatusRunning {
		return nil // resumed since it finished
	}
	if info.TranscriptPath != "" && !session.Archived(info.TranscriptPath) {
		to, err := a.Transcripts.ArchiveTranscript(ctx, info, now)
		if err != nil {
			return err
		}
		err = a.Index.UpdateSession(ctx, sessionID, func(in *session.Info) error {
			in.TranscriptPath = to
			return nil
		})
		if err != nil {
			return err
		}
	}
	if taskID == "" {
		return nil
	}
	return a.markArchived(ctx, taskID)
}

// markArchived records on the task that its session is archived, so no
// later sweep reads it again.
func (a Archiver) markArchived(ctx context.Context, taskID string) error {
	_, err := a.Tasks.UpdateTask(ctx, taskID, func(t *task.Task) error {
		t.Archived = true
		return nil
	})
	return err
}

// Sweep archives the child sessions that finished at least After before
// now: those of background tasks, found through the task records, then
// those of foreground runs, which have none, found through the session
// index. Runs stopped by runTimeoutSeconds are background runs (their task
// says timeout) and are left alone, as S-S3 says. The runtime sweeps when
// it opens, so archiving needs no process to stay up; now is a parameter
// so tests need no waiting. It returns how many sessions it archived.
func (a Archiver) Sweep(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-a.After)
	// Only what is still to do is read: the sweep runs at every start, so
	// its cost must not grow with the history.
	recs, err := a.Tasks.ListTasks(ctx, task.Filter{
		Statuses:       []task.Status{task.StatusCompleted, task.StatusFailed, task.StatusKilled},
		FinishedBefore: cutoff, Unarchived: true,
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range recs {
		if t.ChildSessionID == "" || a.Live(t.ID) {
			continue
		}
		if err := a.Archive(ctx, t.ID, t.ChildSessionID, now); err != nil {
			return n, err
		}
		n++
	}
	ended, err := a.Index.ListSessions(ctx, session.Filter{EndedBefore: cutoff})
	if err != nil {
		return n, err
	}
	for _, info := range ended {
		if info.TranscriptPath == "" || a.Live(info.ID) {
			continue
		}
		// A child with a task record ran in the background: the records
		// above decide (a timed-out one stays).
		if _, err := a.Tasks.GetTask(ctx, info.ID); !errors.Is(err, task.ErrNotFound) {
			if err != nil {
				return n, err
			}
			continue
		}
		if err := a.Archive(ctx, "", info.ID, now); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
