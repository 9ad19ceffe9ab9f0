package cadre

import (
	"context"
	"errors"
	"iter"
	"os"
	"strings"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// The session tree (DESIGN S-I4, OpenCode's parent/child navigation): a
// session with its parent, children and siblings, and its transcript,
// live while it runs — for the TUI's tree screen and any other front end.

// SessionNode is a session in a tree, with the description of the call
// that started it (a subagent's; "" when unknown, as for a main session).
type SessionNode struct {
	Session
	Description string
}

// SessionTree is a session's place in its tree.
type SessionTree struct {
	Session SessionNode
	// Parent is the session whose agent started it; nil for a main
	// session.
	Parent *SessionNode
	// Children are the sessions its agent started, oldest first.
	Children []SessionNode
	// Siblings are the parent's children, oldest first, this session
	// included at Position; a main session is its own only sibling.
	Siblings []SessionNode
	Position int
}

// SessionTree returns session id with its parent, children and siblings;
// its error wraps ErrNotFound when there is no such session.
func (r *Runtime) SessionTree(ctx context.Context, id string) (SessionTree, error) {
	if err := session.ValidateID(id); err != nil {
		return SessionTree{}, err
	}
	if err := r.app.Settled(ctx); err != nil {
		return SessionTree{}, err
	}
	info, err := r.app.DB.GetSession(ctx, id)
	if err != nil {
		return SessionTree{}, wrapNotFound(err)
	}
	descs := r.descriptions()
	node := func(s session.Info) SessionNode {
		return SessionNode{Session: s, Description: descs[s.ID]}
	}
	children := func(parent string) ([]SessionNode, error) {
		infos, err := r.app.DB.ListSessions(ctx, session.Filter{ParentID: &parent})
		if err != nil {
			return nil, err
		}
		recs, err := r.app.DB.ListTasks(ctx, task.Filter{ParentSessionID: parent})
		if err != nil {
			return nil, err
		}
		for _, t := range recs {
			if _, ok := descs[t.ID]; !ok {
				descs[t.ID] = t.Description
			}
		}
		out := make([]SessionNode, 0, len(infos))
		// The store lists newest first; a tree reads oldest first.
		for i := len(infos) - 1; i >= 0; i-- {
			out = append(out, node(infos[i]))
		}
		return out, nil
	}
	tree := SessionTree{}
	if info.ParentID != "" {
		sibs, err := children(info.ParentID)
		if err != nil {
			return SessionTree{}, err
		}
		tree.Siblings = sibs
		for i, s := range sibs {
			if s.ID == id {
				tree.Position = i
			}
		}
		if p, err := r.app.DB.GetSession(ctx, info.ParentID); err == nil {
			pn := node(p)
			tree.Parent = &pn
		} else if !errors.Is(err, session.ErrNotFound) {
			return SessionTree{}, err
		}
	}
	if tree.Children, err = children(id); err != nil {
		return SessionTree{}, err
	}
	tree.Session = node(info)
	if tree.Siblings == nil {
		tree.Siblings = []SessionNode{tree.Session}
	}
	return tree, nil
}

// descriptions are the descriptions of the runs of this process's open
// conversations, by session id: a foreground run leaves no task record
// to read one from.
func (r *Runtime) descriptions() map[string]string {
	r.groupMu.Lock()
	defer r.groupMu.Unlock()
	out := map[string]string{}
	for _, g := range r.groups {
		for _, run := range g.Runs() {
			out[run.ID] = run.Description
		}
	}
	return out
}

// WatchSession yields session id's transcript so far as events (user,
// assistant and system entries, in order), then each new message of it as
// it is published, until ctx ends: a running subagent's transcript, live.
// A message is yielded once even when it is both recorded and published
// while the watch starts.
func (r *Runtime) WatchSession(ctx context.Context, id string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := session.ValidateID(id); err != nil {
			yield(Event{}, err)
			return
		}
		if err := r.app.Settled(ctx); err != nil {
			yield(Event{}, err)
			return
		}
		info, err := r.app.DB.GetSession(ctx, id)
		if err != nil {
			yield(Event{}, wrapNotFound(err))
			return
		}
		// Subscribed before reading, so nothing falls between the two.
		main := info.ParentID == ""
		sub := r.app.Bus.Subscribe(func(e event.Event) bool {
			if main {
				return e.SessionID == id && e.AgentID == ""
			}
			return e.AgentID == id
		})
		defer sub.Close()
		seen := map[string]bool{}
		entries, _, err := r.app.Sessions.ReadTranscript(ctx, info)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			yield(Event{}, err)
			return
		}
		for _, e := range entries {
			seen[e.UUID] = true
			ev := Event{Type: EventType(e.Type), Subtype: e.Subtype, SessionID: id, UUID: e.UUID, Time: e.Timestamp, Message: e.Message}
			if !main {
				ev.AgentID, ev.AgentType = id, info.Agent
			}
			if e.Type == "summary" {
				ev.Type, ev.Subtype = EventSystem, SubtypeCompactBoundary
			}
			if !yield(ev, nil) {
				return
			}
		}
		for e := range sub.Events(ctx) {
			if e.UUID != "" && seen[e.UUID] {
				continue
			}
			if !strings.HasPrefix(string(e.Type), "stream") && !yield(eventOf(e), nil) {
				return
			}
		}
	}
}
