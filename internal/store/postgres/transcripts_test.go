package postgres

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/session/sessiontest"
	"github.com/cadre-dev/cadre/llm"
)

// testOrphanAfter is the orphan timeout of the conformance suite's nodes:
// short, so that its killed-writer case waits seconds, and still many
// heartbeats (testHeartbeat) long, so that a live node under load is not
// taken for a silent one.
const (
	testOrphanAfter = 4 * time.Second
	testHeartbeat   = 200 * time.Millisecond
)

// testNode is one process's view of a shared database: its own DB (pool),
// its node record, heartbeating as package cluster's would until stopped.
type testNode struct {
	db   *DB
	id   string
	stop func() // stops the heartbeat and waits for it
}

// startNode opens a DB on url as node id, registered and heartbeating
// every testHeartbeat until the test ends or stop is called.
func startNode(t *testing.T, url, id string) *testNode {
	t.Helper()
	db := open(t, url)
	if err := db.RegisterNode(t.Context(), id, "test", 1); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(testHeartbeat)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				db.HeartbeatNode(ctx, id) // a missed beat is what the timeout allows for
			}
		}
	})
	stop := sync.OnceFunc(func() { cancel(); wg.Wait() })
	t.Cleanup(stop)
	return &testNode{db: db, id: id, stop: stop}
}

func (n *testNode) transcripts() *Transcripts { return n.db.Transcripts(n.id, testOrphanAfter) }

// TestTranscriptConformance: each node is a DB of its own (its own pool)
// on one database, with a node record it heartbeats. Killing a node stops
// its heartbeat and nothing else: its writers still reach the server, as a
// process frozen or cut off and then back would, so the suite's check that
// the killed writer cannot append after the takeover is the lease's own,
// not a closed pool's.
func TestTranscriptConformance(t *testing.T) {
	sessiontest.RunTranscripts(t, func(t *testing.T) sessiontest.Nodes {
		url := pg.URL(t)
		nodes := map[session.Transcripts]*testNode{}
		return sessiontest.Nodes{
			Node: func() session.Transcripts {
				n := startNode(t, url, fmt.Sprintf("node-%d", len(nodes)+1))
				tr := n.transcripts()
				nodes[tr] = n
				return tr
			},
			Kill: func(tr session.Transcripts) { nodes[tr].stop() },
		}
	})
}

// TestTranscriptLocation: a transcript kept here is located by a path no
// file API is handed (session.InFile), and its archived form is one the
// index's archive sweep skips.
func TestTranscriptLocation(t *testing.T) {
	tr := open(t, pg.URL(t)).Transcripts("n1", time.Hour)
	loc := tr.Locate("s1")
	if loc != "postgres:transcripts/s1" || session.InFile(loc) {
		t.Errorf("Locate = %q (InFile %v), want postgres:transcripts/s1, not a file", loc, session.InFile(loc))
	}
}

func userEntry(id, text string) session.Entry {
	m := llm.UserText(text)
	return session.Entry{Type: session.EntryUser, SessionID: id, Message: &m}
}

// TestTranscriptClaimRules: who may take a claim over, by its node's
// record. Each case claims s1 as holder, changes the holder's record, and
// then has taker claim it with its own orphan timeout.
func TestTranscriptClaimRules(t *testing.T) {
	for _, tc := range []struct {
		name   string
		holder string
		record func(t *testing.T, db *DB) // the holder's node record
		taker  string
		orphan time.Duration // the taker's
		taken  bool
	}{
		{"live node: in use", "n1", register("n1"), "n2", time.Hour, false},
		{"node left cleanly: at once", "n1", leave("n1"), "n2", time.Hour, true},
		{"silent node: after the orphan timeout", "n1", silence("n1", 2*time.Hour), "n2", time.Hour, true},
		{"silent, not for long enough", "n1", silence("n1", 30*time.Minute), "n2", time.Hour, false},
		{"no record yet, young claim: in use", "n1", nil, "n2", time.Hour, false},
		{"same node, even though it left: in use", "n1", leave("n1"), "n1", time.Hour, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := open(t, pg.URL(t))
			if tc.record != nil {
				tc.record(t, db)
			}
			w, err := db.Transcripts(tc.holder, time.Hour).Create(t.Context(), "s1", true)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w2, _, _, err := db.Transcripts(tc.taker, tc.orphan).Resume(t.Context(), session.Info{ID: "s1"})
			switch {
			case tc.taken && err != nil:
				t.Fatalf("take-over: %v, want it to succeed", err)
			case !tc.taken && !errors.Is(err, session.ErrInUse):
				t.Fatalf("take-over: err = %v, want ErrInUse", err)
			}
			if w2 != nil {
				w2.Close()
			}
		})
	}
}

func register(id string) func(t *testing.T, db *DB) {
	return func(t *testing.T, db *DB) {
		if err := db.RegisterNode(t.Context(), id, "test", 1); err != nil {
			t.Fatal(err)
		}
	}
}

func leave(id string) func(t *testing.T, db *DB) {
	return func(t *testing.T, db *DB) {
		register(id)(t, db)
		if err := db.LeaveNode(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
}

// silence sets node id's last heartbeat ago, by the database's clock.
func silence(id string, ago time.Duration) func(t *testing.T, db *DB) {
	return func(t *testing.T, db *DB) {
		register(id)(t, db)
		if _, err := db.pool.Exec(t.Context(), `UPDATE nodes SET heartbeat_at = now() - make_interval(secs => $2) WHERE id = $1`, id, ago.Seconds()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTranscriptClaimWithoutRecord: a writer whose node has not recorded
// itself (its first heartbeat is still on the way) keeps its claim for
// the orphan timeout from when it claimed, and no longer.
func TestTranscriptClaimWithoutRecord(t *testing.T) {
	db := open(t, pg.URL(t))
	w, err := db.Transcripts("n1", time.Hour).Create(t.Context(), "s1", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := db.pool.Exec(t.Context(), `UPDATE transcripts SET writer_since = now() - interval '2 hours' WHERE session_id = 's1'`); err != nil {
		t.Fatal(err)
	}
	w2, _, _, err := db.Transcripts("n2", time.Hour).Resume(t.Context(), session.Info{ID: "s1"})
	if err != nil {
		t.Fatalf("claim two hours old of a node with no record: %v, want it taken over", err)
	}
	w2.Close()
}

// TestTranscriptTakeoverUnderAppends: a writer appends without pause while
// another node takes its claim over (its node left). The taker reads
// exactly the entries whose appends succeeded, the first writer's next
// append fails with ErrClaimLost, and its entries and the taker's never
// interleave: an append in flight at the takeover is either in what the
// taker read or not appended at all.
func TestTranscriptTakeoverUnderAppends(t *testing.T) {
	url := pg.URL(t)
	a, b := startNode(t, url, "a"), startNode(t, url, "b")
	w, err := a.transcripts().Create(t.Context(), "s1", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	started := make(chan struct{})
	done := make(chan struct {
		n   int
		err error
	}, 1)
	go func() {
		n := 0
		var err error
		for {
			if err = w.Append(userEntry("s1", fmt.Sprintf("a-%d", n))); err != nil {
				break
			}
			if n++; n == 5 {
				close(started)
			}
		}
		done <- struct {
			n   int
			err error
		}{n, err}
	}()
	select {
	case <-started:
	case r := <-done:
		t.Fatalf("appends failed after %d: %v", r.n, r.err)
	}
	if err := a.db.LeaveNode(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	w2, got, _, err := b.transcripts().Resume(t.Context(), session.Info{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	r := <-done
	if !errors.Is(r.err, ErrClaimLost) {
		t.Errorf("the first writer's append after the takeover: %v, want ErrClaimLost", r.err)
	}
	if len(got) != r.n {
		t.Fatalf("the taker read %d entries; %d appends had succeeded", len(got), r.n)
	}
	if err := w2.Append(userEntry("s1", "b-0")); err != nil {
		t.Fatal(err)
	}
	all, _, err := b.transcripts().Read(t.Context(), session.Info{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range all {
		want := fmt.Sprintf("a-%d", i)
		if i == r.n {
			want = "b-0"
		}
		if e.Message.Text() != want {
			t.Fatalf("entry %d is %q, want %q", i, e.Message.Text(), want)
		}
	}
	if len(all) != r.n+1 {
		t.Fatalf("%d entries, want %d", len(all), r.n+1)
	}
}

// TestTranscriptWritersShareThePool: open writers hold no connection of
// their own. A hundred sessions write at once through a pool of four,
// and the server sees no more than the pool's connections.
func TestTranscriptWritersShareThePool(t *testing.T) {
	url := pg.URL(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	n := startNode(t, url+sep+"pool_max_conns=4", "n1")
	tr := n.transcripts()
	const sessions = 100
	var ws []*session.Writer
	for i := range sessions {
		w, err := tr.Create(t.Context(), fmt.Sprintf("s%d", i), true)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		ws = append(ws, w)
	}
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	for i, w := range ws {
		wg.Go(func() { errs <- w.Append(userEntry(fmt.Sprintf("s%d", i), "hello")) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var conns int
	if err := n.db.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()`).Scan(&conns); err != nil {
		t.Fatal(err)
	}
	if conns > 4 {
		t.Errorf("%d connections to the database with %d writers open, want at most the pool's 4", conns, sessions)
	}
}

// BenchmarkTranscriptAppend measures appends per second of one writer, each
// committed before Append returns. pgtest's server runs with fsync off, so
// this is the round trip and the insert, not a disk's flush.
func BenchmarkTranscriptAppend(b *testing.B) {
	tr := open(b, pg.URL(b)).Transcripts("bench", time.Hour)
	w, err := tr.Create(context.Background(), "bench", true)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	msg := llm.UserText(fmt.Sprintf("%0200d", 0)) // a short message, ~400 bytes a line
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := w.Append(session.Entry{Type: session.EntryUser, SessionID: "bench", Message: &msg}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

// TestTranscriptCloseUnderAppends: closing the store while its writers
// append releases their claims without racing an append in flight: every
// append after that fails, none is half done, and another node resumes
// the session at once.
func TestTranscriptCloseUnderAppends(t *testing.T) {
	url := pg.URL(t)
	db := open(t, url)
	w, err := db.Transcripts("n1", time.Hour).Create(t.Context(), "s1", true)
	if err != nil {
		t.Fatal(err)
	}
	started, done := make(chan struct{}), make(chan int, 1)
	go func() {
		n := 0
		for w.Append(userEntry("s1", "x")) == nil {
			if n++; n == 5 {
				close(started)
			}
		}
		done <- n
	}()
	select {
	case <-started: // a few appends are through: close under the next ones
	case n := <-done:
		t.Fatalf("appends failed after %d, before the store was closed", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	n := <-done
	if w, err := db.Transcripts("n1", time.Hour).Create(t.Context(), "s2", true); !errors.Is(err, fs.ErrClosed) {
		if w != nil {
			w.Close()
		}
		t.Errorf("Create on a closed store: err = %v, want fs.ErrClosed", err)
	}
	other := open(t, url).Transcripts("n2", time.Hour)
	w2, got, _, err := other.Resume(t.Context(), session.Info{ID: "s1"})
	if err != nil {
		t.Fatalf("resume after the first store closed: %v", err)
	}
	defer w2.Close()
	if len(got) != n {
		t.Fatalf("read %d entries after %d appends succeeded", len(got), n)
	}
}

// TestTranscriptTakeoverWaitsForAppend: an append that has passed its
// claim check but not yet committed holds the takeover back until it
// commits, so the taker reads it. The append is held mid-statement by
// another transaction's uncommitted entry with the same sequence number
// (its insert waits on that key); a takeover that did not wait would
// read the transcript without it and then see it appended behind its
// back.
func TestTranscriptTakeoverWaitsForAppend(t *testing.T) {
	url := pg.URL(t)
	a, b := startNode(t, url, "a"), startNode(t, url, "b")
	w, err := a.transcripts().Create(t.Context(), "s1", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Append(userEntry("s1", "a-0")); err != nil {
		t.Fatal(err)
	}
	blocker, err := b.db.pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Rollback(context.Background())
	if _, err := blocker.Exec(t.Context(), `INSERT INTO transcript_entries (session_id, seq, line) VALUES ('s1', 2, 'blocker')`); err != nil {
		t.Fatal(err)
	}
	appended := make(chan error, 1)
	go func() { appended <- w.Append(userEntry("s1", "a-1")) }()
	waitBlocked(t, b.db, "INSERT INTO transcript_entries%")

	if err := a.db.LeaveNode(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	type resumed struct {
		w   *session.Writer
		got []session.Entry
		err error
	}
	took := make(chan resumed, 1)
	go func() {
		w2, got, _, err := b.transcripts().Resume(context.Background(), session.Info{ID: "s1"})
		took <- resumed{w2, got, err}
	}()
	waitBlocked(t, b.db, "UPDATE transcripts%")
	if err := blocker.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-appended; err != nil {
		t.Fatalf("the held append: %v", err)
	}
	r := <-took
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer r.w.Close()
	if len(r.got) != 2 || r.got[1].Message.Text() != "a-1" {
		t.Fatalf("the taker read %d entries; want both of the first writer's, a-1 last", len(r.got))
	}
}

// waitBlocked waits until a statement like query waits for a lock on the
// server (polling pg_stat_activity, with a deadline).
func waitBlocked(t *testing.T, db *DB, query string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var n int
		err := db.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND ltrim(query) LIKE $1`, query).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no statement like %q came to wait for a lock", query)
		}
		time.Sleep(10 * time.Millisecond) // polling a server, not synchronising goroutines
	}
}

// TestTranscriptAppendAllOneRoundTrip: a writer's batch of entries (a
// turn's notifications) is one round trip to the server, where one append
// each was one each; the entries are kept in order, numbered on from the
// entry before, each the parent of the next.
func TestTranscriptAppendAllOneRoundTrip(t *testing.T) {
	proxy, url := newProxy(t, pg.URL(t))
	db := open(t, url)
	tr := db.Transcripts("n1", time.Hour)
	w, err := tr.Create(t.Context(), "s1", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The first use of a statement on a connection prepares it, a round
	// trip of its own (pgx's statement cache): both are used once first.
	if err := w.Append(userEntry("s1", "first")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.AppendAll([]session.Entry{userEntry("s1", "second"), userEntry("s1", "third")}); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var batch []session.Entry
	for i := range n {
		batch = append(batch, userEntry("s1", fmt.Sprintf("notification %d", i)))
	}
	proxy.count()
	if got, err := w.AppendAll(batch); err != nil || got != n {
		t.Fatalf("AppendAll: %d, %v; want %d, nil", got, err, n)
	}
	if trips := proxy.count(); trips != 1 {
		t.Errorf("AppendAll of %d entries took %d round trips, want 1", n, trips)
	}
	for _, e := range batch[:3] {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if trips := proxy.count(); trips != 3 {
		t.Errorf("3 single appends took %d round trips, want 3", trips)
	}

	entries, problems, err := tr.Read(t.Context(), session.Info{ID: "s1"})
	if err != nil || len(problems) > 0 {
		t.Fatalf("Read: %v %v", err, problems)
	}
	if len(entries) != 3+n+3 {
		t.Fatalf("%d entries, want %d", len(entries), 3+n+3)
	}
	for i, e := range entries[3 : 3+n] {
		if want := fmt.Sprintf("notification %d", i); e.Message.Text() != want {
			t.Errorf("entry %d is %q, want %q", i+1, e.Message.Text(), want)
		}
	}
	for i := 1; i < len(entries); i++ {
		if entries[i].ParentUUID != entries[i-1].UUID {
			t.Errorf("entry %d's parent is %q, want the entry before's %q", i, entries[i].ParentUUID, entries[i-1].UUID)
		}
	}
	var seqs []int
	if err := db.pool.QueryRow(t.Context(), `SELECT array_agg(seq ORDER BY seq) FROM transcript_entries WHERE session_id = 's1'`).Scan(&seqs); err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		if s != i+1 {
			t.Fatalf("sequence numbers %v, want 1 to %d without gaps", seqs, len(seqs))
		}
	}
}

// TestTranscriptAppendAllAfterTakeover: a batch appended after another
// node took the claim over inserts none of its entries and fails with
// ErrClaimLost.
func TestTranscriptAppendAllAfterTakeover(t *testing.T) {
	url := pg.URL(t)
	db := open(t, url)
	w, err := db.Transcripts("n1", time.Hour).Create(t.Context(), "s1", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	leave("n1")(t, db)
	w2, _, _, err := open(t, url).Transcripts("n2", time.Hour).Resume(t.Context(), session.Info{ID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	n, err := w.AppendAll([]session.Entry{userEntry("s1", "one"), userEntry("s1", "two")})
	if n != 0 || !errors.Is(err, ErrClaimLost) {
		t.Fatalf("AppendAll after the takeover: %d, %v; want 0 and ErrClaimLost", n, err)
	}
	entries, _, err := db.Transcripts("n1", time.Hour).Read(t.Context(), session.Info{ID: "s1"})
	if err != nil || len(entries) != 0 {
		t.Fatalf("the transcript has %d entries (%v), want none", len(entries), err)
	}
}
