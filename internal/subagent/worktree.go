package subagent

import (
	"context"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent/childsetup"
)

// Worktree isolation (S-W1; childsetup.Isolate and Settle): the child works
// in a git worktree of its own, kept and reported if it changed anything.

// isolate creates r's worktree and moves the child into it.
func (s *Service) isolate(ctx context.Context, r *run) error {
	if r.req.SessionID != "" {
		// A continued agent goes on in the directory it had.
		return nil
	}
	tree, cwd, err := childsetup.Isolate(ctx, r.child.cwd, r.sess.Info.ID, r.req.Cwd)
	if err != nil {
		return err
	}
	r.tree = tree
	r.child.cwd, r.child.caller.Cwd = cwd, cwd
	r.child.policy.Workspace, r.child.caller.Workspace = cwd, cwd
	r.child.policy.AdditionalDirs = slices.DeleteFunc(slices.Clone(r.child.policy.AdditionalDirs), func(d string) bool { return d == s.cfg.MainCwd })
	// The session records where it works, so continuing it goes back there.
	if !r.sess.IsRecorded() {
		r.sess.Info.Cwd = cwd // recorded with its task (internal/subagent/records)
		return nil
	}
	return s.cfg.Index.UpdateSession(ctx, r.sess.Info.ID, func(in *session.Info) error {
		in.Cwd = cwd
		return nil
	})
}

// settle finishes r's worktree after the run and adds what became of it to
// the result the parent receives.
func (s *Service) settle(t *liveTask, r *run, res *runner.Result) {
	if r.tree == nil {
		return
	}
	out, note := childsetup.Settle(r.tree)
	if note == "" {
		return
	}
	res.Result = strings.TrimSpace(res.Result + "\n\n[worktree] " + note)
	t.mu.Lock()
	t.tree = &out
	t.mu.Unlock()
}
