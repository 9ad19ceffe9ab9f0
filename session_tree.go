package cadre

import (
	"context"
	"iter"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/view"
)

// The session tree (DESIGN S-I4, OpenCode's parent/child navigation): a
// session with its parent, children and siblings, and its transcript,
// live while it runs — for the TUI's tree screen and any other front end.

// SessionNode is a session in a tree, with the description of the call
// that started it (view.SessionNode).
type SessionNode = view.SessionNode

// SessionTree is a session's place in its tree (view.SessionTree).
type SessionTree = view.SessionTree

// SessionTree returns session id with its parent, children and siblings;
// its error wraps ErrNotFound when there is no such session.
func (r *Runtime) SessionTree(ctx context.Context, id string) (SessionTree, error) {
	if err := session.ValidateID(id); err != nil {
		return SessionTree{}, err
	}
	if err := r.app.Settled(ctx); err != nil {
		return SessionTree{}, err
	}
	tree, err := r.app.SessionTree(ctx, id, r.descriptions())
	return tree, wrapNotFound(err)
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
		for ev, err := range r.app.WatchSession(ctx, id) {
			if !yield(ev, wrapNotFound(err)) {
				return
			}
		}
	}
}
