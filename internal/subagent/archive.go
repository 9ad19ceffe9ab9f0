package subagent

import (
	"context"
	"time"

	"github.com/cadre-dev/cadre/internal/archive"
)

// archiver archives this runtime's finished child sessions (S-S3,
// internal/archive), leaving the runs in progress here alone.
func (s *Service) archiver() archive.Archiver {
	return archive.Archiver{
		Index: s.cfg.Index, Transcripts: s.cfg.Sessions, Tasks: s.cfg.Tasks,
		Live:  func(id string) bool { return s.live(id) != nil },
		After: time.Duration(s.cfg.Settings.ArchiveAfter()) * time.Minute,
	}
}

// Sweep archives the child sessions that finished at least
// subagents.archiveAfterMinutes before now (archive.Archiver.Sweep). The
// runtime sweeps when it opens; now is a parameter so tests need no
// waiting.
func (s *Service) Sweep(ctx context.Context, now time.Time) (int, error) {
	return s.archiver().Sweep(ctx, now)
}
