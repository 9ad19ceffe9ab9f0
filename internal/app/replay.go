package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/cadre-dev/cadre/internal/replay"
	"github.com/cadre-dev/cadre/internal/session"
)

// LoadRecording reads the session tree a replay runs again (agentID's
// subtree when set) from the store, and the session the tree's workspace
// is recorded on: its top.
func (a *App) LoadRecording(ctx context.Context, sessionID, agentID string) (*replay.Recording, session.Info, error) {
	src := replaySource{a}
	main, err := a.DB.GetSession(ctx, sessionID)
	if err != nil {
		return nil, session.Info{}, fmt.Errorf("replay session %s: %w", sessionID, err)
	}
	// The workspace is the tree's: a subagent's cwd may be a worktree
	// that is gone.
	top := main
	for hops := 0; top.ParentID != "" && hops < 64; hops++ {
		p, err := a.DB.GetSession(ctx, top.ParentID)
		if err != nil {
			break
		}
		top = p
	}
	id := sessionID
	if agentID != "" {
		if err := session.ValidateID(agentID); err != nil {
			return nil, session.Info{}, fmt.Errorf("replay agent: %w", err)
		}
		sub, err := a.DB.GetSession(ctx, agentID)
		if err != nil {
			return nil, session.Info{}, fmt.Errorf("replay agent %s: %w", agentID, err)
		}
		if !descends(ctx, a, sub, sessionID) {
			return nil, session.Info{}, fmt.Errorf("replay agent %s: not a subagent run of session %s (see `cadre sessions show %s`)", agentID, sessionID, sessionID)
		}
		id = agentID
	}
	rec, err := replay.Load(ctx, src, id)
	if err != nil {
		return nil, session.Info{}, fmt.Errorf("replay: %w", err)
	}
	return rec, top, nil
}

// descends reports whether s is below the session ancestor.
func descends(ctx context.Context, a *App, s session.Info, ancestor string) bool {
	for hops := 0; s.ParentID != "" && hops < 64; hops++ {
		if s.ParentID == ancestor {
			return true
		}
		p, err := a.DB.GetSession(ctx, s.ParentID)
		if err != nil {
			return false
		}
		s = p
	}
	return false
}

// replaySource reads a recording through a runtime's store.
type replaySource struct{ a *App }

func (s replaySource) Session(ctx context.Context, id string) (session.Info, error) {
	info, err := s.a.DB.GetSession(ctx, id)
	return info, err
}

func (s replaySource) Children(ctx context.Context, id string) ([]session.Info, error) {
	infos, err := s.a.DB.ListSessions(ctx, session.Filter{ParentID: &id})
	slices.Reverse(infos) // the store lists newest first
	return infos, err
}

func (s replaySource) Transcript(ctx context.Context, info session.Info) ([]session.Entry, error) {
	entries, _, err := s.a.Sessions.ReadTranscript(ctx, info)
	return entries, err
}
