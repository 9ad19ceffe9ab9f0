package session

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Transcripts is where a Manager keeps its sessions' transcripts: Files (a
// JSONL file per session, the default) or a store shared by many machines
// (the PostgreSQL store's). Every implementation passes the conformance
// suite sessiontest.RunTranscripts.
//
// A transcript has one writer at a time, across processes and machines:
// while a Writer from Create or Resume is open, another Create or Resume of
// the same session fails with an error wrapping ErrInUse. The claim ends
// with the Writer's Close or with the process that holds it, however it
// ends, so a killed writer never blocks a later --resume.
type Transcripts interface {
	// Locate is what a new session's record holds as its TranscriptPath:
	// a file's path, or a location in a store that is no file path
	// (InFile).
	Locate(id string) string
	// Create claims session id's transcript for a new session's first
	// run. With fresh set the transcript must not exist yet (an id used
	// before must never append to another session's transcript); without
	// it, one that exists is continued.
	Create(ctx context.Context, id string, fresh bool) (*Writer, error)
	// Resume claims the existing transcript of info's session, reads it
	// and returns its entries and the lines it had to skip (as Read) with
	// a Writer that continues after its last entry. The claim comes
	// before the read, so nothing can be appended between the two. A
	// transcript that does not exist is an error wrapping os.ErrNotExist.
	Resume(ctx context.Context, info Info) (*Writer, []Entry, []string, error)
	// Read reads every entry of info's transcript, in order, without
	// claiming it. It is tolerant: what cannot be read is skipped and
	// described in problems (see ReadTranscript). A transcript that does
	// not exist is an error wrapping os.ErrNotExist.
	Read(ctx context.Context, info Info) (entries []Entry, problems []string, err error)
	// Archive moves info's finished transcript out of the way (DESIGN
	// S-S3), kept so the session can still be resumed, and returns the
	// TranscriptPath its record holds from then on: one Archived
	// reports true for.
	Archive(ctx context.Context, info Info, at time.Time) (string, error)
}

// InFile reports whether a TranscriptPath names a file, as opposed to a
// location in a database ("postgres:transcripts/<id>") or nothing (a
// session kept in memory). Only a file may be handed to what opens files:
// hooks' transcript_path, the model's Read.
func InFile(transcriptPath string) bool {
	return transcriptPath != "" && !InStore(transcriptPath)
}

// InStore reports whether a TranscriptPath is a location in a database:
// the transcript is read through the Manager's Transcripts, by session id,
// from any machine sharing that database.
func InStore(transcriptPath string) bool {
	return strings.HasPrefix(transcriptPath, "postgres:")
}

// Files keeps each transcript in a JSONL file, <Dir>/<id>.jsonl, private
// to the user, with its writer's claim an flock on the file (OpenWriter).
type Files struct {
	Dir string
}

var _ Transcripts = Files{}

// Locate is <Dir>/<id>.jsonl.
func (f Files) Locate(id string) string { return filepath.Join(f.Dir, id+".jsonl") }

// Create creates (fresh) or opens the transcript file of session id.
func (f Files) Create(_ context.Context, id string, fresh bool) (*Writer, error) {
	if fresh {
		return createWriter(f.Locate(id))
	}
	return OpenWriter(f.Locate(id))
}

// Resume claims the file info.TranscriptPath (Locate's when the record has
// none), reads it, and then terminates a partial last line for the Writer.
func (f Files) Resume(_ context.Context, info Info) (*Writer, []Entry, []string, error) {
	path := info.TranscriptPath
	if path == "" {
		path = f.Locate(info.ID)
	}
	// A session that lost its transcript has nothing to resume: it must
	// not come back empty because opening the writer created the file.
	if _, err := os.Stat(path); err != nil {
		return nil, nil, nil, fmt.Errorf("read transcript: %w", err)
	}
	fh, err := claim(path)
	if err != nil {
		return nil, nil, nil, err
	}
	// Read before the writer mends a partial last line, so that the line
	// is reported as what it is: cut off by a killed writer.
	entries, problems, err := ReadTranscript(path)
	if err != nil {
		return nil, nil, nil, errors.Join(err, fh.Close())
	}
	w, err := newWriter(fh, path)
	if err != nil {
		return nil, nil, nil, err
	}
	return w, entries, problems, nil
}

// Read reads the file info.TranscriptPath.
func (f Files) Read(_ context.Context, info Info) ([]Entry, []string, error) {
	return ReadTranscript(info.TranscriptPath)
}

// Archive renames the file to <path>.deleted.<unix ms>. A record without a
// transcript file, or one archived already, is left as it is.
func (f Files) Archive(_ context.Context, info Info, at time.Time) (string, error) {
	if !InFile(info.TranscriptPath) || Archived(info.TranscriptPath) {
		return info.TranscriptPath, nil
	}
	to := fmt.Sprintf("%s.deleted.%d", info.TranscriptPath, at.UnixMilli())
	if err := os.Rename(info.TranscriptPath, to); err != nil {
		return "", fmt.Errorf("archive session %s: %w", info.ID, err)
	}
	return to, nil
}
