package taskout

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/internal/runlog"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/task"
)

// Files are the output files of one service's tasks (S-L5).
type Files struct {
	// Dir is where they go ($CADRE_HOME/tasks).
	Dir   string
	Tasks task.Store
	// Index and Sessions read a transcript a store keeps.
	Index    session.Index
	Sessions *session.Manager
}

// suffix ends a task's output file name: <Dir>/<id>.output.
const suffix = ".output"

// Path is the output file of the run with this id.
func (f Files) Path(id string) string { return filepath.Join(f.Dir, id+suffix) }

// For is the output file of the run of the child session info: none ("")
// when a store keeps its transcript, which is then read as its output
// (Output), so that every node sees it and no file is written.
func (f Files) For(info session.Info) string {
	if session.InStore(info.TranscriptPath) {
		return ""
	}
	return f.Path(info.ID)
}

// Own reports whether path (absolute, symbolic links resolved) is the
// output file of a task of sessionID's run tree: the file the launch text
// tells the model it may Read, although it lies outside the workspace.
// Another tree's output stays out of reach, as TaskOutput's does.
func (f Files) Own(ctx context.Context, sessionID, path string) bool {
	dir, err := filepath.EvalSymlinks(f.Dir)
	if err != nil || filepath.Dir(path) != dir {
		return false
	}
	id, ok := strings.CutSuffix(filepath.Base(path), suffix)
	if !ok || task.ValidateID(id) != nil {
		return false
	}
	rec, err := f.Tasks.GetTask(ctx, id)
	if err != nil || rec.RootSessionID == "" {
		return false
	}
	return RootOf(ctx, f.Index, sessionID) == rec.RootSessionID
}

// RootOf is the main session of sessionID's run tree, "" when the chain of
// parents cannot be followed.
func RootOf(ctx context.Context, index session.Index, sessionID string) string {
	cur := sessionID
	// Deeper than any spawn depth cadre allows: a cycle ends here.
	for range 16 {
		info, err := index.GetSession(ctx, cur)
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

// Output is rec's output as text (`cadre tasks output`, the SDK's
// TaskOutput): the log of its run, from its output file or, when a store
// keeps its transcript (no output file), from that transcript, so that any
// node sharing the store shows it.
func (f Files) Output(ctx context.Context, rec task.Task) (string, error) {
	if rec.OutputFile != "" || rec.ChildSessionID == "" {
		return runlog.File(rec)
	}
	log, err := f.transcriptLog(ctx, rec.ChildSessionID)
	if err != nil {
		return "", fmt.Errorf("task %s: %w", rec.ID, err)
	}
	return runlog.WithEnd(rec, log), nil
}

// Tail is the last n bytes of the log of rec, a run in another process:
// its output file's, or its transcript's when a store keeps that (no
// output file), read wherever the run is.
func (f Files) Tail(ctx context.Context, rec task.Task, n int) string {
	if rec.Kind == task.KindLocalBash {
		return shelltask.RawTail(rec.OutputFile, n)
	}
	if rec.OutputFile != "" || rec.ChildSessionID == "" {
		return runlog.Tail(rec.OutputFile, n)
	}
	log, err := f.transcriptLog(ctx, rec.ChildSessionID)
	if err != nil {
		return ""
	}
	return runlog.Newest(log, n)
}

// transcriptLog renders the log of the transcript of child session id,
// wherever the sessions keep it.
func (f Files) transcriptLog(ctx context.Context, id string) (string, error) {
	info, err := f.Index.GetSession(ctx, id)
	if err != nil {
		return "", err
	}
	entries, _, err := f.Sessions.ReadTranscript(ctx, info)
	if err != nil {
		return "", err
	}
	return runlog.FromEntries(entries), nil
}
