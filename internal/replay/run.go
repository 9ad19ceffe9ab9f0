package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/approval"
	"github.com/cadre-dev/cadre/internal/ids"
	"github.com/cadre-dev/cadre/internal/worktree"
)

// ScratchTree makes the scratch worktree: the workspace's HEAD with its
// uncommitted changes laid over it, committed on the tree's own branch so
// that what the replay changes can be told apart.
func ScratchTree(ctx context.Context, workspace string) (*worktree.Tree, error) {
	tree, err := worktree.Create(ctx, workspace, "replay-"+ids.New())
	if err != nil {
		return nil, fmt.Errorf("replay needs a scratch git worktree of the workspace (or --in-place to run the tools in it): %w", err)
	}
	err = tree.Overlay(ctx)
	if err == nil {
		err = tree.Snapshot(ctx)
	}
	if err != nil {
		_ = tree.Discard(ctx)
		return nil, fmt.Errorf("replay scratch worktree: %w", err)
	}
	return tree, nil
}

// FilesChanged lists what the replay changed under cwd (the workspace's
// place in the scratch tree), relative to it.
func FilesChanged(ctx context.Context, tree *worktree.Tree, cwd string) ([]string, error) {
	paths, err := tree.Changed(ctx)
	if err != nil {
		return nil, fmt.Errorf("replay: list the files it changed: %w", err)
	}
	out := []string{}
	for _, p := range paths {
		rel, err := filepath.Rel(cwd, filepath.Join(tree.Path, p))
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		out = append(out, filepath.ToSlash(rel))
	}
	slices.Sort(out)
	return out, nil
}

// Permission answers the approvals a replay's calls need as the
// recording does: a recorded call that ran is approved again, one that was
// refused is refused again. A call the recording does not have (a live
// turn's) goes to live, or is refused.
func Permission(rec *Recording, live approval.Func) approval.Func {
	return func(ctx context.Context, req approval.Request) (approval.Decision, error) {
		res, ok := rec.Result(req.ToolUseID)
		switch {
		case !ok && live != nil:
			return live(ctx, req)
		case !ok:
			return approval.Decision{Message: "cadre replay approves only the calls the recorded run made"}, nil
		case res.IsError && refusal(res.ResultText()):
			return approval.Decision{Message: res.ResultText()}, nil
		}
		return approval.Decision{Allow: true}, nil
	}
}

// refusal reports whether a recorded error result reads as a refused
// approval rather than a failure of the tool.
func refusal(text string) bool {
	t := strings.ToLower(text)
	return strings.Contains(t, "denied") || strings.Contains(t, "permission") || strings.Contains(t, "not approved") || strings.Contains(t, "refused")
}
