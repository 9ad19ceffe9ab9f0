package childsetup

import (
	"context"
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/internal/worktree"
)

// Worktree isolation (S-W1): the child works in a git worktree of its own,
// on a new branch named from its agent id. When it ends — completed,
// failed or killed — the worktree is removed if nothing changed, and kept
// otherwise, with its path and branch reported in the result; never left
// behind unreported.

// Isolate creates the worktree of child id, which would work in cwd, and
// returns it with the child's directory in it. callCwd is the call's own
// cwd: a worktree child works in its own checkout, never in one it names.
func Isolate(ctx context.Context, cwd, id, callCwd string) (*worktree.Tree, string, error) {
	if callCwd != "" {
		return nil, "", errors.New("cwd and isolation \"worktree\" cannot be combined: a worktree agent works in its own checkout")
	}
	tree, err := worktree.Create(ctx, cwd, id)
	if err != nil {
		return nil, "", err
	}
	return tree, tree.Rel(cwd), nil
}

// Settle finishes tree after its child's run: what became of it, and the
// note the parent's result gets ("" for none). A tree that cannot be
// settled is kept, and the note says so.
func Settle(tree *worktree.Tree) (worktree.Outcome, string) {
	// Finish uses its own bounded context: a cancelled run is settled too.
	out, err := tree.Finish(context.Background())
	if err != nil {
		return out, fmt.Sprintf("worktree %s (branch %s) could not be settled and was kept: %v", tree.Path, tree.Branch, err)
	}
	return out, out.Summary
}
