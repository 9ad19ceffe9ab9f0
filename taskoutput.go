package cadre

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/internal/task"
)

// ownTaskOutput reports whether path (absolute, symbolic links resolved)
// is the output file of a task of the run tree sessionID belongs to: the
// file the launch text tells the model it may Read. Another session's
// task output stays out of reach, as TaskOutput's does.
func (r *Runtime) ownTaskOutput(ctx context.Context, sessionID, path string) bool {
	dir, err := filepath.EvalSymlinks(filepath.Join(r.cfg.Home, "tasks"))
	if err != nil || filepath.Dir(path) != dir {
		return false
	}
	id, ok := strings.CutSuffix(filepath.Base(path), ".output")
	if !ok || task.ValidateID(id) != nil {
		return false
	}
	rec, err := r.db.GetTask(ctx, id)
	if err != nil || rec.RootSessionID == "" {
		return false
	}
	return r.rootSession(ctx, sessionID) == rec.RootSessionID
}

// rootSession is the main session of sessionID's run tree, "" when the
// chain cannot be followed.
func (r *Runtime) rootSession(ctx context.Context, sessionID string) string {
	cur := sessionID
	// Deeper than any spawn depth cadre allows: a cycle ends here.
	for range 32 {
		info, err := r.db.GetSession(ctx, cur)
		if err != nil {
			return ""
		}
		if info.ParentID == "" {
			return info.ID
		}
		cur = info.ParentID
	}
	return ""
}
