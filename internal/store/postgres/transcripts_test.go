package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/session/sessiontest"
	"github.com/cadre-dev/cadre/llm"
)

// TestTranscriptConformance: each node is a DB of its own (its own pool
// and writer connections) on one database; killing a node closes them
// without closing its writers, as a killed process's sockets close.
func TestTranscriptConformance(t *testing.T) {
	sessiontest.RunTranscripts(t, func(t *testing.T) sessiontest.Nodes {
		url := pg.URL(t)
		nodes := map[session.Transcripts]*DB{}
		return sessiontest.Nodes{
			Node: func() session.Transcripts {
				db := open(t, url)
				nodes[db.Transcripts()] = db
				return db.Transcripts()
			},
			Kill: func(tr session.Transcripts) { nodes[tr].Close() },
		}
	})
}

// TestTranscriptLocation: a transcript kept here is located by a path no
// file API is handed (session.InFile), and its archived form is one the
// index's archive sweep skips.
func TestTranscriptLocation(t *testing.T) {
	tr := open(t, pg.URL(t)).Transcripts()
	loc := tr.Locate("s1")
	if loc != "postgres:transcripts/s1" || session.InFile(loc) {
		t.Errorf("Locate = %q (InFile %v), want postgres:transcripts/s1, not a file", loc, session.InFile(loc))
	}
}

// BenchmarkTranscriptAppend measures appends per second of one writer, each
// committed before Append returns. pgtest's server runs with fsync off, so
// this is the round trip and the insert, not a disk's flush.
func BenchmarkTranscriptAppend(b *testing.B) {
	tr := open(b, pg.URL(b)).Transcripts()
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
// append ends their claims without racing an append in flight; every
// append after that fails, none is half done.
func TestTranscriptCloseUnderAppends(t *testing.T) {
	url := pg.URL(t)
	db := open(t, url)
	w, err := db.Transcripts().Create(t.Context(), "s1", true)
	if err != nil {
		t.Fatal(err)
	}
	started, done := make(chan struct{}), make(chan int, 1)
	go func() {
		n := 0
		for w.Append(session.Entry{Type: session.EntryUser, SessionID: "s1", Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("x")}}}) == nil {
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
	db.Close()
	n := <-done
	other := open(t, url).Transcripts()
	got, _, err := other.Read(t.Context(), session.Info{ID: "s1"})
	if err != nil || len(got) != n {
		t.Fatalf("read %d entries (%v) after %d appends succeeded", len(got), err, n)
	}
}

// TestTranscriptWriterKeepalive: a writer's connection asks the server for
// TCP keepalives a minute long, so the claim of a machine that vanished
// ends within about a minute; a setting in the store URL wins.
func TestTranscriptWriterKeepalive(t *testing.T) {
	for _, tc := range []struct{ query, want string }{
		{"", "30"},
		{"tcp_keepalives_idle=45", "45"},
	} {
		url := pg.URL(t)
		if tc.query != "" {
			sep := "?"
			if strings.Contains(url, "?") {
				sep = "&"
			}
			url += sep + tc.query
		}
		s, err := open(t, url).tr.claim(t.Context(), "s1")
		if err != nil {
			t.Fatal(err)
		}
		var idle, count string
		if err := s.conn.QueryRow(t.Context(), `SELECT current_setting('tcp_keepalives_idle'), current_setting('tcp_keepalives_count')`).Scan(&idle, &count); err != nil {
			t.Fatal(err)
		}
		if idle != tc.want || count != "3" {
			t.Errorf("URL %q: writer keepalive idle %s count %s, want %s and 3", tc.query, idle, count, tc.want)
		}
		s.Close()
	}
}
