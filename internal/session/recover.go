package session

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// errChanged aborts a Recover update whose session changed since it was
// judged abandoned.
var errChanged = errors.New("session changed since it was listed")

// Recover marks failed the sessions that processes which have ended left
// running, so that no session stays "running" after a crash; their
// transcripts are intact, so they can still be resumed. A session is
// abandoned when it is running and
//
//   - its Owner is recorded and alive reports that owner gone, or
//   - it is one of orphans (the child sessions of tasks whose process
//     ended, see task.Recover) and its Owner is unrecorded or gone.
//
// Each session is re-checked inside its atomic update (still running, same
// owner), so one that a live process resumed in the meantime, making itself
// the owner, keeps running: Recover may run alongside new runs. alive is
// asked once per owner, outside the Index's lock.
//
// It returns the ids of the sessions it marked. An error on one session
// does not stop the others; the errors are joined.
func Recover(ctx context.Context, idx Index, alive func(owner string) bool, orphans []string, now time.Time) ([]string, error) {
	running, err := idx.ListSessions(ctx, Filter{Statuses: []Status{StatusRunning}})
	if err != nil {
		return nil, fmt.Errorf("recover sessions: %w", err)
	}
	gone := map[string]bool{} // owner → ended, asked once per owner
	ended := func(owner string) bool {
		g, ok := gone[owner]
		if !ok {
			g = !alive(owner)
			gone[owner] = g
		}
		return g
	}
	candidates := map[string]bool{}
	for _, id := range orphans {
		candidates[id] = true
	}
	var marked []string
	var errs []error
	fail := func(in Info) {
		err := idx.UpdateSession(ctx, in.ID, func(s *Info) error {
			if s.Status != StatusRunning || s.Owner != in.Owner {
				return errChanged
			}
			s.Status, s.Updated = StatusFailed, NormalizeTime(now)
			return nil
		})
		switch {
		case err == nil:
			marked = append(marked, in.ID)
		case errors.Is(err, errChanged), errors.Is(err, ErrNotFound):
		default:
			errs = append(errs, fmt.Errorf("recover session %s: %w", in.ID, err))
		}
	}
	for _, in := range running {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		switch {
		case in.Owner == "" && !candidates[in.ID]:
			// No process recorded: it may be a live run of an older cadre.
		case in.Owner != "" && !ended(in.Owner):
		default:
			fail(in)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return marked, fmt.Errorf("recover sessions: %w", err)
	}
	return marked, nil
}
