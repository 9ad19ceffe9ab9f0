package subagent

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

//go:embed prompts/announce.md
var announcePrompt string

// announceSkip is the reply with which a child declines to announce.
const announceSkip = "ANNOUNCE_SKIP"

// announce is the gateway's announce step (S-N2): one more turn in the
// child's session asks it for a report to its requester, and the result is
// normalised to Status / Result / Notes and a stats line. Status comes from
// the runtime's outcome, never from the model's text. skip is true when
// the child replied ANNOUNCE_SKIP: nothing is posted.
func (s *Service) announce(ctx context.Context, conv *runner.Conversation, t *liveTask, r *run, res *runner.Result, status task.Status) (text string, skip bool) {
	reply := ""
	if status == task.StatusCompleted && ctx.Err() == nil {
		turn := conv.Turn(ctx, llm.UserText(strings.TrimSpace(announcePrompt)))
		if turn.Err == nil {
			reply = strings.TrimSpace(turn.Result)
		}
		// The announce turn is part of the run's cost.
		res.Usage = res.Usage.Add(turn.Usage)
		res.Cost += turn.Cost
	}
	if reply == announceSkip {
		return "", true
	}
	word := map[task.Status]string{task.StatusCompleted: "success", task.StatusFailed: "error", task.StatusTimeout: "timeout"}[status]
	if word == "" {
		word = "unknown"
	}
	if reply == "" {
		reply = "(not available)"
	}
	notes := "none"
	if res.Err != nil {
		notes = res.Err.Error()
	}
	u := res.Usage
	stats := fmt.Sprintf("runtime %s · tokens %s in / %s out / %s total · est. cost $%.4f · session key %s · session id %s · transcript %s",
		s.cfg.Now().Sub(t.started).Round(time.Second), human(u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens), human(u.OutputTokens), human(u.Total()),
		res.Cost, r.sess.Info.Key, r.sess.Info.ID, r.sess.Info.TranscriptPath)
	return fmt.Sprintf("Status: %s\nResult: %s\nNotes: %s\n%s", word, reply, notes, stats), false
}

func human(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// archive renames a finished child session's transcript to
// *.deleted.<timestamp> (S-S3): kept on disk, out of the way. The index
// follows the file, so the agent can still be resumed from it. taskID, if
// not "", is the task whose record is marked archived.
func (s *Service) archive(ctx context.Context, taskID, sessionID string, now time.Time) error {
	info, err := s.cfg.Index.GetSession(ctx, sessionID)
	if err != nil {
		return err
	}
	if info.Status == session.StatusRunning {
		return nil // resumed since it finished
	}
	if info.TranscriptPath != "" && !session.Archived(info.TranscriptPath) {
		to := fmt.Sprintf("%s.deleted.%d", info.TranscriptPath, now.UnixMilli())
		if err := os.Rename(info.TranscriptPath, to); err != nil {
			return fmt.Errorf("archive session %s: %w", sessionID, err)
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
