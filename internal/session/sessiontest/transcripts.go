package sessiontest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

// Nodes gives a transcript conformance test its processes: each Node is a
// handle on the same storage as another process (or machine) would have.
type Nodes struct {
	// Node returns a new handle on the test's storage.
	Node func() session.Transcripts
	// Kill ends tr's process abruptly: its writers' claims must end
	// without their Close, as a SIGKILL's or a lost machine's do, though
	// perhaps only after a while (testKilledWriter). nil
	// skips the case (Files: the kernel's part, tested with real
	// descriptors in package session).
	Kill func(tr session.Transcripts)
}

// RunTranscripts tests a session.Transcripts implementation. newNodes must
// return fresh, empty storage for each call and arrange its cleanup.
func RunTranscripts(t *testing.T, newNodes func(t *testing.T) Nodes) {
	tests := []struct {
		name string
		fn   func(t *testing.T, n Nodes)
	}{
		{"RoundTripByteIdentical", testRoundTrip},
		{"FreshMustBeNew", testFresh},
		{"ResumeContinues", testResume},
		{"Missing", testMissing},
		{"OneWriterRace", testOneWriterRace},
		{"KilledWriterReleases", testKilledWriter},
		{"ClosedWriterReleasesAtOnce", testClosedWriterReleases},
		{"ConcurrentAppends", testConcurrentAppends},
		{"Archive", testArchive},
		{"AppendAfterClose", testAppendAfterClose},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newNodes(t))
		})
	}
}

func infoOf(tr session.Transcripts, id string) session.Info {
	return session.Info{ID: id, TranscriptPath: tr.Locate(id)}
}

// entries are transcript entries with every field a writer would fill in
// already set, and content that JSON encoders like to change: markup,
// non-ASCII text, escapes, and one large tool result.
func entries(id string, n int) []session.Entry {
	var out []session.Entry
	parent := ""
	for i := range n {
		text := fmt.Sprintf("line %d: <task-notification> & \"quotes\" \\ ünïcødé 日本語 \t%s", i, strings.Repeat("x", i))
		if i == 2 {
			text = strings.Repeat("a large tool result ", 10_000)
		}
		e := session.Entry{
			Type: session.EntryUser, UUID: fmt.Sprintf("%s-entry-%03d", id, i), ParentUUID: parent, SessionID: id,
			Timestamp: base.Add(time.Duration(i) * time.Millisecond), Message: ptr(llm.UserText(text)),
		}
		if i%3 == 1 {
			e.Type, e.Model, e.Usage = session.EntryAssistant, "scripted", &llm.Usage{InputTokens: int64(i), OutputTokens: 2}
			e.Message = &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text(text)}}
		}
		out = append(out, e)
		parent = e.UUID
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func create(t *testing.T, tr session.Transcripts, id string, fresh bool) *session.Writer {
	t.Helper()
	w, err := tr.Create(t.Context(), id, fresh)
	if err != nil {
		t.Fatalf("Create(%s, fresh=%v): %v", id, fresh, err)
	}
	return w
}

func read(t *testing.T, tr session.Transcripts, info session.Info) []session.Entry {
	t.Helper()
	got, problems, err := tr.Read(t.Context(), info)
	if err != nil {
		t.Fatalf("Read(%s): %v", info.ID, err)
	}
	if len(problems) > 0 {
		t.Errorf("Read(%s) had problems: %q", info.ID, problems)
	}
	return got
}

// sameLines fails unless got encode to exactly the lines want do: what is
// read back is what a transcript file holds, byte for byte.
func sameLines(t *testing.T, got, want []session.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		g, err := session.EncodeEntry(got[i])
		if err != nil {
			t.Fatal(err)
		}
		w, _ := session.EncodeEntry(want[i])
		if !bytes.Equal(g, w) {
			t.Fatalf("entry %d read back as\n%.300s\nwant\n%.300s", i, g, w)
		}
	}
}

func testRoundTrip(t *testing.T, n Nodes) {
	tr := n.Node()
	want := entries("s1", 8)
	w := create(t, tr, "s1", true)
	for _, e := range want {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	// Readable while the writer is open, from another node too.
	sameLines(t, read(t, n.Node(), infoOf(tr, "s1")), want)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sameLines(t, read(t, tr, infoOf(tr, "s1")), want)
}

func testFresh(t *testing.T, n Nodes) {
	tr := n.Node()
	w := create(t, tr, "s1", true)
	first := entries("s1", 1)[0]
	if err := w.Append(first); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if w, err := tr.Create(t.Context(), "s1", true); err == nil {
		w.Close()
		t.Fatal("a fresh Create of an existing transcript succeeded; want an error")
	}
	// Not fresh: the transcript is continued after its last entry.
	w = create(t, n.Node(), "s1", false)
	if err := w.Append(session.Entry{Type: session.EntryUser, SessionID: "s1", Message: ptr(llm.UserText("next"))}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got := read(t, tr, infoOf(tr, "s1"))
	if len(got) != 2 || got[1].ParentUUID != first.UUID || got[1].UUID == "" || got[1].Timestamp.IsZero() {
		t.Fatalf("continued transcript = %+v; want a second entry whose parent is %s, with a UUID and time", got, first.UUID)
	}
	// A new, not fresh transcript starts empty.
	w = create(t, tr, "s2", false)
	w.Close()
	if got := read(t, tr, infoOf(tr, "s2")); len(got) != 0 {
		t.Errorf("a new transcript has %d entries", len(got))
	}
}

func testResume(t *testing.T, n Nodes) {
	a, b := n.Node(), n.Node()
	want := entries("s1", 4)
	w := create(t, a, "s1", true)
	for _, e := range want {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()

	w, got, problems, err := b.Resume(t.Context(), infoOf(b, "s1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Errorf("problems: %q", problems)
	}
	sameLines(t, got, want)
	if err := w.Append(session.Entry{Type: session.EntryUser, SessionID: "s1", Message: ptr(llm.UserText("resumed"))}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	all := read(t, a, infoOf(a, "s1"))
	if len(all) != 5 || all[4].ParentUUID != want[3].UUID {
		t.Fatalf("after resume: %d entries, last parent %q; want 5, parent %s", len(all), all[len(all)-1].ParentUUID, want[3].UUID)
	}
}

func testMissing(t *testing.T, n Nodes) {
	tr := n.Node()
	if _, _, err := tr.Read(t.Context(), infoOf(tr, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read of a missing transcript: err = %v, want os.ErrNotExist", err)
	}
	if w, _, _, err := tr.Resume(t.Context(), infoOf(tr, "nope")); !errors.Is(err, os.ErrNotExist) {
		if w != nil {
			w.Close()
		}
		t.Errorf("Resume of a missing transcript: err = %v, want os.ErrNotExist", err)
	}
	// A failed Resume holds no claim and creates nothing.
	if _, _, err := tr.Read(t.Context(), infoOf(tr, "nope")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read after the failed Resume: err = %v, want os.ErrNotExist", err)
	}
}

// testOneWriterRace: writers on several nodes claim one session at once,
// by Create and by Resume; exactly one wins and the others are told it is
// in use. Once the winner closes, the next claim succeeds.
func testOneWriterRace(t *testing.T, n Nodes) {
	tr := n.Node()
	create(t, tr, "s1", true).Close()
	const racers = 6
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []*session.Writer
		others  []error
	)
	start := make(chan struct{})
	for i := range racers {
		node := n.Node()
		wg.Go(func() {
			<-start
			var w *session.Writer
			var err error
			if i%2 == 0 {
				w, err = node.Create(t.Context(), "s1", false)
			} else {
				w, _, _, err = node.Resume(t.Context(), infoOf(node, "s1"))
			}
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				winners = append(winners, w)
			} else {
				others = append(others, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if len(winners) != 1 {
		for _, w := range winners {
			w.Close()
		}
		t.Fatalf("%d writers won the claim, want exactly 1 (others: %v)", len(winners), others)
	}
	for _, err := range others {
		if !errors.Is(err, session.ErrInUse) {
			t.Errorf("a losing claim's error = %v, want ErrInUse", err)
		}
	}
	if err := winners[0].Close(); err != nil {
		t.Fatal(err)
	}
	w, _, _, err := n.Node().Resume(t.Context(), infoOf(tr, "s1"))
	if err != nil {
		t.Fatalf("claim after the winner closed: %v", err)
	}
	w.Close()
}

// testKilledWriter: a writer whose process dies without Close does not
// keep the session from being resumed for long: a store may judge the
// process dead only after a while (PostgreSQL: once its node has been
// silent for the orphan timeout), so the claim is retried until a
// deadline rather than expected at once. The dead writer cannot append
// after that, and a writer closed cleanly is claimed at once.
func testKilledWriter(t *testing.T, n Nodes) {
	if n.Kill == nil {
		t.Skip("no way to kill a node")
	}
	dying, other := n.Node(), n.Node()
	w := create(t, dying, "s1", true)
	if err := w.Append(entries("s1", 1)[0]); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := other.Resume(t.Context(), infoOf(other, "s1")); !errors.Is(err, session.ErrInUse) {
		t.Fatalf("Resume while the writer lives: err = %v, want ErrInUse", err)
	}
	n.Kill(dying)
	deadline := time.Now().Add(20 * time.Second)
	for {
		w2, got, _, err := other.Resume(t.Context(), infoOf(other, "s1"))
		if err == nil {
			defer w2.Close()
			if len(got) != 1 {
				t.Errorf("the killed writer's transcript has %d entries, want the 1 appended", len(got))
			}
			break
		}
		if !errors.Is(err, session.ErrInUse) || time.Now().After(deadline) {
			t.Fatalf("Resume after the writer's process died: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // polling a server, not synchronising goroutines
	}
	if err := w.Append(entries("s1", 2)[1]); err == nil {
		t.Error("the killed node's writer still appends after another claimed the session")
	}
}

// testClosedWriterReleases: a writer's clean Close frees its session for
// the next writer at once, on another node, with no timeout to wait out.
func testClosedWriterReleases(t *testing.T, n Nodes) {
	a, b := n.Node(), n.Node()
	w := create(t, a, "s1", true)
	if err := w.Append(entries("s1", 1)[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w2, got, _, err := b.Resume(t.Context(), infoOf(b, "s1"))
	if err != nil {
		t.Fatalf("Resume right after the writer closed: %v", err)
	}
	defer w2.Close()
	if len(got) != 1 {
		t.Errorf("resumed %d entries, want 1", len(got))
	}
}

// testConcurrentAppends: goroutines sharing one writer append at once;
// every entry is read back whole, each goroutine's in its own order, and
// the parent chain follows the order read (the order appended).
func testConcurrentAppends(t *testing.T, n Nodes) {
	tr := n.Node()
	w := create(t, tr, "s1", true)
	const goroutines, each = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				text := fmt.Sprintf("g%d-%03d %s", g, i, strings.Repeat("y", 500*(i%5)))
				errs <- w.Append(session.Entry{Type: session.EntryUser, SessionID: "s1", Message: ptr(llm.UserText(text))})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	got := read(t, tr, infoOf(tr, "s1"))
	if len(got) != goroutines*each {
		t.Fatalf("read %d entries, want %d", len(got), goroutines*each)
	}
	next := map[string]int{}
	for i, e := range got {
		if i > 0 && e.ParentUUID != got[i-1].UUID {
			t.Fatalf("entry %d's parent is %q, want the entry before it (%s)", i, e.ParentUUID, got[i-1].UUID)
		}
		text := e.Message.Text()
		g, num, _ := strings.Cut(text, "-")
		want := fmt.Sprintf("%03d", next[g])
		if !strings.HasPrefix(num, want+" ") {
			t.Fatalf("entry %d is %.20q, want %s's entry %s next", i, text, g, want)
		}
		next[g]++
	}
}

func testArchive(t *testing.T, n Nodes) {
	tr := n.Node()
	want := entries("s1", 3)
	w := create(t, tr, "s1", true)
	for _, e := range want {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	at := base.Add(time.Hour)
	info := infoOf(tr, "s1")
	to, err := tr.Archive(t.Context(), info, at)
	if err != nil {
		t.Fatal(err)
	}
	if !session.Archived(to) || !strings.HasPrefix(to, info.TranscriptPath) {
		t.Fatalf("archived location %q: want %q with an archive mark", to, info.TranscriptPath)
	}
	info.TranscriptPath = to
	sameLines(t, read(t, n.Node(), info), want)
	// An archived session can still be resumed.
	w, got, _, err := tr.Resume(t.Context(), info)
	if err != nil {
		t.Fatalf("resume an archived session: %v", err)
	}
	defer w.Close()
	sameLines(t, got, want)
}

func testAppendAfterClose(t *testing.T, n Nodes) {
	w := create(t, n.Node(), "s1", true)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Append(entries("s1", 1)[0]); err == nil {
		t.Error("Append after Close succeeded")
	}
}
