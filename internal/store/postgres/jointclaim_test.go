package postgres

import (
	"errors"
	"io/fs"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

// jointChild records session and task id together, as a background
// child's launch does, and creates its transcript fresh on node.
func jointChild(t *testing.T, db *DB, node, id string) *session.Writer {
	t.Helper()
	if err := db.CreateSessionTask(t.Context(), info(id), tasktest.Sample(id)); err != nil {
		t.Fatal(err)
	}
	w, err := db.Transcripts(node, time.Hour).Create(t.Context(), id, true)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// closedChild is jointChild with one entry appended and its writer
// closed: its release held for its end.
func closedChild(t *testing.T, db *DB, id string) {
	t.Helper()
	w := jointChild(t, db, "n1", id)
	if err := w.Append(userEntry(id, "x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// resumeElsewhere resumes session id's transcript as another node (its
// own DB on url) would, failing t (after when) if it cannot, and returns
// how many entries it read.
func resumeElsewhere(t *testing.T, url, id, when string) int {
	t.Helper()
	w, entries, _, err := open(t, url).Transcripts("n2", time.Hour).Resume(t.Context(), info(id))
	if err != nil {
		t.Errorf("another node resuming %s, %s: %v", id, when, err)
		return 0
	}
	w.Close()
	return len(entries)
}

// endJoint records the end of child id's session and task together.
func endJoint(t *testing.T, db *DB, id string) {
	t.Helper()
	_, err := db.TransitionSessionTask(t.Context(), id, func(s *session.Info) error {
		s.Status = session.StatusCompleted
		return nil
	}, id, func(*task.Task) (task.Event, error) { return task.EventComplete, nil })
	if err != nil {
		t.Fatal(err)
	}
}

// TestJointTranscriptRoundTrips: a background child's transcript costs its
// appends and nothing else — the claim rides with the first append, the
// release with the write of its end — and the transcript is claimable by
// another node as soon as that end is written.
func TestJointTranscriptRoundTrips(t *testing.T) {
	proxy, url := newProxy(t, pg.URL(t))
	db := open(t, url)
	for i, id := range []string{"warm", "c1"} { // the first prepares the statements
		w := jointChild(t, db, "n1", id)
		proxy.count()
		for _, text := range []string{"the prompt", "the answer"} {
			if err := w.Append(userEntry(id, text)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		endJoint(t, db, id)
		if n := proxy.count(); i > 0 && n != 3 {
			t.Errorf("two appends, the close and the end took %d round trips, want 3", n)
		}
	}
	if n := resumeElsewhere(t, url, "c1", "after the child's end"); n != 2 {
		t.Errorf("resumed %d entries, want 2", n)
	}
}

// TestJointTranscriptHeldRelease: a release held for the child's end is
// made first by a claim of the same session on this node, and by
// DB.Close; a failed end still makes it.
func TestJointTranscriptHeldRelease(t *testing.T) {
	url := pg.URL(t)
	t.Run("a resume on this node before the end", func(t *testing.T) {
		db := open(t, url)
		closedChild(t, db, "r1")
		w, _, _, err := db.Transcripts("n1", time.Hour).Resume(t.Context(), info("r1"))
		if err != nil {
			t.Fatalf("resume after the close, before the end: %v", err)
		}
		w.Close() // released at once: this session's end took its held release
		resumeElsewhere(t, url, "r1", "after the second writer's close")
	})
	t.Run("the store closed before the end", func(t *testing.T) {
		db := open(t, url)
		closedChild(t, db, "r2")
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		resumeElsewhere(t, url, "r2", "after the store closed")
	})
	t.Run("an end that fails", func(t *testing.T) {
		db := open(t, url)
		closedChild(t, db, "r3")
		// A completed task cannot complete again: the transition is refused.
		if _, err := db.Transition(t.Context(), "r3", func(*task.Task) (task.Event, error) { return task.EventComplete, nil }); err != nil {
			t.Fatal(err)
		}
		_, err := db.TransitionSessionTask(t.Context(), "r3", func(*session.Info) error { return nil },
			"r3", func(*task.Task) (task.Event, error) { return task.EventComplete, nil })
		if !errors.Is(err, task.ErrTransition) {
			t.Fatalf("completing a completed task: %v; want ErrTransition", err)
		}
		resumeElsewhere(t, url, "r3", "after the failed end")
	})
}

// TestJointTranscriptClaimedBeforeRecord: a run launched for another node
// claims its transcript before its record is written and releases it for
// that node; the release is made at once, not held for an end this node
// will not write.
func TestJointTranscriptClaimedBeforeRecord(t *testing.T) {
	url := pg.URL(t)
	db := open(t, url)
	w, err := db.Transcripts("n1", time.Hour).Create(t.Context(), "x1", true)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSessionTask(t.Context(), info("x1"), tasktest.Sample("x1")); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(userEntry("x1", "the prompt")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := resumeElsewhere(t, url, "x1", "released for the node that runs it"); n != 1 {
		t.Errorf("resumed %d entries, want 1", n)
	}
}

// TestJointTranscriptDeferredClaim: the claim deferred to the first append
// still finds a transcript already there, and a writer closed before any
// append leaves an empty transcript, as a fresh Create does.
func TestJointTranscriptDeferredClaim(t *testing.T) {
	url := pg.URL(t)
	db := open(t, url)
	t.Run("a transcript already there", func(t *testing.T) {
		before, err := open(t, url).Transcripts("n2", time.Hour).Create(t.Context(), "d1", true)
		if err != nil {
			t.Fatal(err)
		}
		defer before.Close()
		w := jointChild(t, db, "n1", "d1")
		defer w.Close()
		if err := w.Append(userEntry("d1", "x")); !errors.Is(err, fs.ErrExist) {
			t.Errorf("first append over another's transcript: %v; want fs.ErrExist", err)
		}
	})
	t.Run("closed before any append", func(t *testing.T) {
		w := jointChild(t, db, "n1", "d2")
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		entries, _, err := db.Transcripts("n1", time.Hour).Read(t.Context(), info("d2"))
		if err != nil || len(entries) != 0 {
			t.Errorf("read of the empty transcript: %d entries, %v; want none and no error", len(entries), err)
		}
	})
	t.Run("open at the store's close", func(t *testing.T) {
		db := open(t, url)
		jointChild(t, db, "n1", "d3")
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := open(t, url).Transcripts("n2", time.Hour).Read(t.Context(), info("d3")); err != nil {
			t.Errorf("read after the store closed: %v; want an empty transcript", err)
		}
	})
}
