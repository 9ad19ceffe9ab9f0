package subagent

import (
	"context"
	"fmt"

	"github.com/cadre-dev/cadre/internal/runlog"
	"github.com/cadre-dev/cadre/internal/task"
)

// A run's output is a plain-text log of what it does (internal/runlog).
// While a run is in this process, readers get the log from memory
// (liveTask.outputTail); its output file is the one the launch text names
// for the model to Read (S-L5).

// transcriptLog renders the log of the transcript of child session id,
// wherever the sessions keep it.
func (s *Service) transcriptLog(ctx context.Context, id string) (string, error) {
	info, err := s.cfg.Index.GetSession(ctx, id)
	if err != nil {
		return "", err
	}
	entries, _, err := s.cfg.Sessions.ReadTranscript(ctx, info)
	if err != nil {
		return "", err
	}
	return runlog.FromEntries(entries), nil
}

// Output is rec's output as text (`cadre tasks output`, the SDK's
// TaskOutput): the log of its run, from its output file or, when a store
// keeps its transcript (no output file), from that transcript, so that any
// node sharing the store shows it.
func (s *Service) Output(ctx context.Context, rec task.Task) (string, error) {
	if rec.OutputFile != "" || rec.ChildSessionID == "" {
		return runlog.File(rec)
	}
	log, err := s.transcriptLog(ctx, rec.ChildSessionID)
	if err != nil {
		return "", fmt.Errorf("task %s: %w", rec.ID, err)
	}
	return runlog.WithEnd(rec, log), nil
}
