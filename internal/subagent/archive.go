package subagent

import (
	"context"
	"errors"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// Archiving (S-S3): finished child sessions are moved out of the way, right
// after their notification (cleanup: delete) or by the sweep at start-up.

// archive moves a finished child session's transcript out of the way
// (S-S3): a file is renamed to *.deleted.<timestamp>, kept on disk; a
// transcript in a store is marked so (session.Manager.Archive). The index
// follows, so the agent can still be resumed from it. taskID, if not "",
// is the task whose record is marked archived.
func (s *Service) archive(ctx context.Context, taskID, sessionID string, now time.Time) error {
	info, err := s.cfg.Index.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	if info.Status == session.StatusRunning {
		return nil // resumed since it finished
	}
	if info.TranscriptPath != "" && !session.Archived(info.TranscriptPath) {
		to, err := s.cfg.Sessions.ArchiveTranscript(ctx, info, now)
		if err != nil {
			return err
		}
		err = s.cfg.Index.UpdateSession(ctx, sessionID, func(in *session.Info) error {
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
	return s.markArchived(ctx, taskID)
}

// markArchived records on the task that its session is archived, so no
// later sweep reads it again.
func (s *Service) markArchived(ctx context.Context, taskID string) error {
	_, err := s.cfg.Tasks.UpdateTask(ctx, taskID, func(t *task.Task) error {
		t.Archived = true
		return nil
	})
	return err
}

// Sweep archives the child sessions that finished at least
// subagents.archiveAfterMinutes before now: those of background tasks,
// found through the task records, then those of foreground runs, which
// have none, found through the session index. Runs stopped by
// runTimeoutSeconds are background runs (their task says timeout) and are
// left alone, as S-S3 says. The runtime sweeps when it opens, so archiving
// needs no process to stay up; now is a parameter so tests need no
// waiting.
func (s *Service) Sweep(ctx context.Context, now time.Time) (int, error) {
	cutoff := now.Add(-time.Duration(s.cfg.Settings.ArchiveAfter()) * time.Minute)
	// Only what is still to do is read: the sweep runs at every start, so
	// its cost must not grow with the history.
	recs, err := s.cfg.Tasks.ListTasks(ctx, task.Filter{
		Statuses:       []task.Status{task.StatusCompleted, task.StatusFailed, task.StatusKilled},
		FinishedBefore: cutoff, Unarchived: true,
	})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range recs {
		if t.ChildSessionID == "" || s.live(t.ID) != nil {
			continue
		}
		if err := s.archive(ctx, t.ID, t.ChildSessionID, now); err != nil {
			return n, err
		}
		n++
	}
	ended, err := s.cfg.Index.ListSessions(ctx, session.Filter{EndedBefore: cutoff})
	if err != nil {
		return n, err
	}
	for _, info := range ended {
		if info.TranscriptPath == "" || s.live(info.ID) != nil {
			continue
		}
		// A child with a task record ran in the background: the records
		// above decide (a timed-out one stays).
		if _, err := s.cfg.Tasks.GetTask(ctx, info.ID); !errors.Is(err, task.ErrNotFound) {
			if err != nil {
				return n, err
			}
			continue
		}
		if err := s.archive(ctx, "", info.ID, now); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
