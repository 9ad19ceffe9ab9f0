package app

import (
	"context"
	"errors"
	"iter"
	"os"
	"strings"

	"github.com/cadre-dev/cadre/event"
	bus "github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/view"
)

// SessionTree is session id with its parent, children and siblings; descs
// are the descriptions of the runs of the process's open conversations
// (a foreground run leaves no task record to read one from).
func (a *App) SessionTree(ctx context.Context, id string, descs map[string]string) (view.SessionTree, error) {
	info, err := a.DB.GetSession(ctx, id)
	if err != nil {
		return view.SessionTree{}, err
	}
	node := func(s session.Info) view.SessionNode {
		return view.SessionNode{Session: s, Description: descs[s.ID]}
	}
	children := func(parent string) ([]view.SessionNode, error) {
		infos, err := a.DB.ListSessions(ctx, session.Filter{ParentID: &parent})
		if err != nil {
			return nil, err
		}
		recs, err := a.DB.ListTasks(ctx, task.Filter{ParentSessionID: parent})
		if err != nil {
			return nil, err
		}
		for _, t := range recs {
			if _, ok := descs[t.ID]; !ok {
				descs[t.ID] = t.Description
			}
		}
		out := make([]view.SessionNode, 0, len(infos))
		// The store lists newest first; a tree reads oldest first.
		for i := len(infos) - 1; i >= 0; i-- {
			out = append(out, node(infos[i]))
		}
		return out, nil
	}
	tree := view.SessionTree{}
	if info.ParentID != "" {
		sibs, err := children(info.ParentID)
		if err != nil {
			return view.SessionTree{}, err
		}
		tree.Siblings = sibs
		for i, s := range sibs {
			if s.ID == id {
				tree.Position = i
			}
		}
		if p, err := a.DB.GetSession(ctx, info.ParentID); err == nil {
			pn := node(p)
			tree.Parent = &pn
		} else if !errors.Is(err, session.ErrNotFound) {
			return view.SessionTree{}, err
		}
	}
	if tree.Children, err = children(id); err != nil {
		return view.SessionTree{}, err
	}
	tree.Session = node(info)
	if tree.Siblings == nil {
		tree.Siblings = []view.SessionNode{tree.Session}
	}
	return tree, nil
}

// WatchSession yields session id's transcript so far as events, then each
// new message of it as it is published, until ctx ends (the SDK's
// Runtime.WatchSession, which checks id and waits for the start-up work).
func (a *App) WatchSession(ctx context.Context, id string) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		info, err := a.DB.GetSession(ctx, id)
		if err != nil {
			yield(event.Event{}, err)
			return
		}
		// Subscribed before reading, so nothing falls between the two.
		main := info.ParentID == ""
		sub := a.Bus.Subscribe(func(e bus.Event) bool {
			if main {
				return e.SessionID == id && e.AgentID == ""
			}
			return e.AgentID == id
		})
		defer sub.Close()
		seen := map[string]bool{}
		entries, _, err := a.Sessions.ReadTranscript(ctx, info)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			yield(event.Event{}, err)
			return
		}
		for _, e := range entries {
			seen[e.UUID] = true
			ev := event.Event{Type: event.EventType(e.Type), Subtype: e.Subtype, SessionID: id, UUID: e.UUID, Time: e.Timestamp, Message: e.Message}
			if !main {
				ev.AgentID, ev.AgentType = id, info.Agent
			}
			if e.Type == "summary" {
				ev.Type, ev.Subtype = event.EventSystem, event.SubtypeCompactBoundary
			}
			if !yield(ev, nil) {
				return
			}
		}
		for e := range sub.Events(ctx) {
			if e.UUID != "" && seen[e.UUID] {
				continue
			}
			if !strings.HasPrefix(string(e.Type), "stream") && !yield(EventOf(e), nil) {
				return
			}
		}
	}
}
