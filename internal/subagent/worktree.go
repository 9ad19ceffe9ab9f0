package subagent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/worktree"
)

// Worktree isolation (S-W1): the child works in a git worktree of its own,
// on a new branch named from its agent id. When it ends — completed,
// failed or killed — the worktree is removed if nothing changed, and kept
// otherwise, with its path and branch reported in the result; never left
// behind unreported.

// isolate creates r's worktree and moves the child into it.
func (s *Service) isolate(ctx context.Context, r *run) error {
	if r.req.SessionID != "" {
		// A continued agent goes on in the directory it had.
		return nil
	}
	if r.req.Cwd != "" {
		return errors.New("cwd and isolation \"worktree\" cannot be combined: a worktree agent works in its own checkout")
	}
	tree, err := worktree.Create(ctx, r.child.cwd, r.sess.Info.ID)
	if err != nil {
		return err
	}
	r.tree = tree
	cwd := tree.Rel(r.child.cwd)
	r.child.cwd, r.child.caller.Cwd = cwd, cwd
	r.child.policy.Workspace, r.child.caller.Workspace = cwd, cwd
	r.child.policy.AdditionalDirs = slices.DeleteFunc(slices.Clone(r.child.policy.AdditionalDirs), func(d string) bool { return d == s.cfg.MainCwd })
	// The session records where it works, so continuing it goes back there.
	if !r.sess.IsRecorded() {
		r.sess.Info.Cwd = cwd // recorded with its task (joint.go)
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
	// Finish uses its own bounded context: a cancelled run is settled too.
	out, err := r.tree.Finish(context.Background())
	note := out.Summary
	if err != nil {
		note = fmt.Sprintf("worktree %s (branch %s) could not be settled and was kept: %v", r.tree.Path, r.tree.Branch, err)
	}
	if note == "" {
		return
	}
	res.Result = strings.TrimSpace(res.Result + "\n\n[worktree] " + note)
	t.mu.Lock()
	t.tree = &out
	t.mu.Unlock()
}
