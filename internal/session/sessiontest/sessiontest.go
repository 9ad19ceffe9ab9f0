package sessiontest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

// Run tests an Index implementation. newIndex must return a fresh, empty
// index for each call, and arrange its cleanup with t.Cleanup.
func Run(t *testing.T, newIndex func(t *testing.T) session.Index) {
	tests := []struct {
		name string
		fn   func(t *testing.T, idx session.Index)
	}{
		{"CreateGet", testCreateGet},
		{"TimesToTheMillisecondInUTC", testTimes},
		{"Duplicate", testDuplicate},
		{"EmptyID", testEmptyID},
		{"NotFound", testNotFound},
		{"Update", testUpdate},
		{"UnknownCost", testUnknownCost},
		{"UpdateError", testUpdateError},
		{"UpdateChangesID", testUpdateChangesID},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"ListOrder", testListOrder},
		{"ListFilters", testListFilters},
		{"ListStatusFilter", testListStatusFilter},
		{"ListEndedBefore", testListEndedBefore},
		{"CanceledContext", testCanceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newIndex(t))
		})
	}
}

// base is a fixed instant, already in the form an Index keeps.
var base = time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

func at(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

func sample(id string) session.Info {
	return session.Info{
		ID:       id,
		ParentID: "parent-1",
		Agent:    "explorer",
		Key:      "agent:explorer:subagent:" + id,
		Title:    "(@explorer subagent)",
		Cwd:      "/work/project",
		Status:   session.StatusRunning,
		Created:  base,
		Updated:  at(250),
		Usage: llm.Usage{
			InputTokens:              1_234_567_890_123,
			OutputTokens:             42,
			CacheCreationInputTokens: 7,
			CacheReadInputTokens:     99_999,
		},
		CostUSD:        llm.USD(0.125),
		NumTurns:       3,
		Model:          "anthropic:claude-sonnet-5-5",
		TranscriptPath: "/home/u/.cadre/sessions/" + id + ".jsonl",
		Owner:          "4242-0123456789abcdef",
	}
}

// timeEqual compares instants, not representations (location, monotonic).
var timeEqual = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func mustCreate(t *testing.T, idx session.Index, s session.Info) {
	t.Helper()
	if err := idx.CreateSession(t.Context(), s); err != nil {
		t.Fatalf("CreateSession(%q): %v", s.ID, err)
	}
}

func mustGet(t *testing.T, idx session.Index, id string) session.Info {
	t.Helper()
	got, err := idx.GetSession(t.Context(), id)
	if err != nil {
		t.Fatalf("GetSession(%q): %v", id, err)
	}
	return got
}

func testCreateGet(t *testing.T, idx session.Index) {
	want := sample("s1")
	mustCreate(t, idx, want)
	got := mustGet(t, idx, "s1")
	if diff := cmp.Diff(want, got, timeEqual); diff != "" {
		t.Errorf("GetSession after CreateSession (-want +got):\n%s", diff)
	}

	mainInfo := session.Info{ID: "m1", Agent: "main", Cwd: "/w", Status: session.StatusIdle, Created: base, Updated: base}
	mustCreate(t, idx, mainInfo)
	if diff := cmp.Diff(mainInfo, mustGet(t, idx, "m1"), timeEqual); diff != "" {
		t.Errorf("main session with empty fields round trip (-want +got):\n%s", diff)
	}
}

func testTimes(t *testing.T, idx session.Index) {
	loc := time.FixedZone("UTC+5", 5*3600)
	s := sample("s1")
	s.Created = time.Date(2026, 1, 2, 3, 4, 5, 678_912_345, loc)
	s.Updated = time.Now() // carries a monotonic reading
	mustCreate(t, idx, s)
	got := mustGet(t, idx, "s1")
	for _, c := range []struct {
		name      string
		got, sent time.Time
	}{{"Created", got.Created, s.Created}, {"Updated", got.Updated, s.Updated}} {
		want := c.sent.UTC().Truncate(time.Millisecond)
		if !c.got.Equal(want) || c.got.Location() != time.UTC {
			t.Errorf("%s = %v, want %v (UTC, to the millisecond)", c.name, c.got, want)
		}
	}
}

func testDuplicate(t *testing.T, idx session.Index) {
	first := sample("s1")
	mustCreate(t, idx, first)
	second := sample("s1")
	second.Title = "impostor"
	if err := idx.CreateSession(t.Context(), second); err == nil {
		t.Fatal("CreateSession with an existing id succeeded, want an error")
	}
	if got := mustGet(t, idx, "s1"); got.Title != first.Title {
		t.Errorf("after a refused duplicate, Title = %q, want %q", got.Title, first.Title)
	}
}

func testEmptyID(t *testing.T, idx session.Index) {
	if err := idx.CreateSession(t.Context(), session.Info{Agent: "main"}); err == nil {
		t.Fatal("CreateSession with an empty id succeeded, want an error")
	}
}

func testNotFound(t *testing.T, idx session.Index) {
	mustCreate(t, idx, sample("s1"))
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s of a missing session: err = %v, want one wrapping ErrNotFound", op, err)
		} else if !strings.Contains(err.Error(), "nope") {
			t.Errorf("%s of a missing session: err = %q, want it to name the id %q", op, err, "nope")
		}
	}
	_, err := idx.GetSession(t.Context(), "nope")
	check("GetSession", err)
	called := false
	err = idx.UpdateSession(t.Context(), "nope", func(*session.Info) error { called = true; return nil })
	check("UpdateSession", err)
	if called {
		t.Error("UpdateSession called fn for a missing session")
	}
}

func testUpdate(t *testing.T, idx session.Index) {
	mustCreate(t, idx, sample("s1"))
	err := idx.UpdateSession(t.Context(), "s1", func(s *session.Info) error {
		s.Status = session.StatusCompleted
		s.Title = "renamed"
		s.Updated = at(5000)
		s.Usage = s.Usage.Add(llm.Usage{InputTokens: 1, OutputTokens: 2, CacheCreationInputTokens: 3, CacheReadInputTokens: 4})
		s.CostUSD = s.CostUSD.Add(llm.USD(1))
		s.NumTurns++
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateSession: %v", err)
	}
	want := sample("s1")
	want.Status = session.StatusCompleted
	want.Title = "renamed"
	want.Updated = at(5000)
	want.Usage = llm.Usage{InputTokens: 1_234_567_890_124, OutputTokens: 44, CacheCreationInputTokens: 10, CacheReadInputTokens: 100_003}
	want.CostUSD = llm.USD(1.125)
	want.NumTurns = 4
	if diff := cmp.Diff(want, mustGet(t, idx, "s1"), timeEqual); diff != "" {
		t.Errorf("after UpdateSession (-want +got):\n%s", diff)
	}
}

// testUnknownCost: a cost with an unpriced part reads back unknown, with
// the priced part kept, on create and after an update; never as $0.
func testUnknownCost(t *testing.T, idx session.Index) {
	s := sample("s1")
	s.CostUSD = llm.USD(0.5).Add(llm.UnknownCost())
	mustCreate(t, idx, s)
	if got := mustGet(t, idx, "s1").CostUSD; got != s.CostUSD {
		t.Errorf("created with cost %v (%#v), read back %v (%#v)", s.CostUSD, s.CostUSD, got, got)
	}
	mustCreate(t, idx, sample("s2"))
	err := idx.UpdateSession(t.Context(), "s2", func(s *session.Info) error {
		s.CostUSD = s.CostUSD.Add(llm.UnknownCost())
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateSession: %v", err)
	}
	got := mustGet(t, idx, "s2").CostUSD
	if v, known := got.USD(); known || v != 0.125 {
		t.Errorf("after adding an unknown cost, read back %v, %v; want 0.125, unknown", v, known)
	}
}

func testUpdateError(t *testing.T, idx session.Index) {
	mustCreate(t, idx, sample("s1"))
	boom := errors.New("boom")
	err := idx.UpdateSession(t.Context(), "s1", func(s *session.Info) error {
		s.Title = "half-done"
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateSession err = %v, want one wrapping fn's error", err)
	}
	if got := mustGet(t, idx, "s1"); got.Title != sample("s1").Title {
		t.Errorf("fn failed but Title was stored: %q", got.Title)
	}
}

func testUpdateChangesID(t *testing.T, idx session.Index) {
	mustCreate(t, idx, sample("s1"))
	err := idx.UpdateSession(t.Context(), "s1", func(s *session.Info) error {
		s.ID = "s2"
		return nil
	})
	if err == nil {
		t.Fatal("UpdateSession that changed the id succeeded, want an error")
	}
	mustGet(t, idx, "s1")
	if _, err := idx.GetSession(t.Context(), "s2"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("GetSession(s2) err = %v, want ErrNotFound", err)
	}
}

// testConcurrentUpdates checks that read-modify-write is atomic: no
// increment may be lost.
func testConcurrentUpdates(t *testing.T, idx session.Index) {
	s := sample("s1")
	s.NumTurns = 0
	s.Usage = llm.Usage{}
	mustCreate(t, idx, s)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				errs <- idx.UpdateSession(t.Context(), "s1", func(s *session.Info) error {
					s.NumTurns++
					s.Usage.OutputTokens += 10
					return nil
				})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent UpdateSession: %v", err)
		}
	}
	got := mustGet(t, idx, "s1")
	if got.NumTurns != workers*each || got.Usage.OutputTokens != 10*workers*each {
		t.Errorf("after %d concurrent increments: NumTurns = %d, OutputTokens = %d; want %d and %d",
			workers*each, got.NumTurns, got.Usage.OutputTokens, workers*each, 10*workers*each)
	}
}

func ids(list []session.Info) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}

func testListOrder(t *testing.T, idx session.Index) {
	// Created order differs from Updated order, and b/c tie on Updated.
	for _, s := range []struct {
		id      string
		updated int
	}{{"a", 10}, {"b", 30}, {"c", 30}, {"d", 20}, {"e", 5}} {
		info := sample(s.id)
		info.Created = at(-s.updated)
		info.Updated = at(s.updated)
		mustCreate(t, idx, info)
	}
	list, err := idx.ListSessions(t.Context(), session.Filter{})
	if err != nil {
		t.Fatalf("ListSessions: %v", err)
	}
	if diff := cmp.Diff([]string{"c", "b", "d", "a", "e"}, ids(list)); diff != "" {
		t.Errorf("ListSessions order: newest Updated first, ties by greater id (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sample("d").Usage, list[2].Usage); diff != "" {
		t.Errorf("ListSessions Usage (-want +got):\n%s", diff)
	}

	// An update moves a session to the front.
	err = idx.UpdateSession(t.Context(), "e", func(s *session.Info) error { s.Updated = at(40); return nil })
	if err != nil {
		t.Fatalf("UpdateSession: %v", err)
	}
	list, err = idx.ListSessions(t.Context(), session.Filter{Limit: 2})
	if err != nil {
		t.Fatalf("ListSessions: %v", err)
	}
	if diff := cmp.Diff([]string{"e", "c"}, ids(list)); diff != "" {
		t.Errorf("ListSessions after update, limit 2 (-want +got):\n%s", diff)
	}
}

func testListFilters(t *testing.T, idx session.Index) {
	add := func(id, parent, cwd string, updated int) {
		s := sample(id)
		s.ParentID, s.Cwd, s.Updated = parent, cwd, at(updated)
		mustCreate(t, idx, s)
	}
	add("m1", "", "/a", 1)
	add("m2", "", "/b", 2)
	add("m3", "", "/a", 3)
	add("c1", "m1", "/a", 4)
	add("c2", "m1", "/a", 5)
	add("c3", "m2", "/b", 6)
	add("g1", "c1", "/a", 7)

	ptr := func(s string) *string { return &s }
	tests := []struct {
		name string
		f    session.Filter
		want []string
	}{
		{"all", session.Filter{}, []string{"g1", "c3", "c2", "c1", "m3", "m2", "m1"}},
		{"main only", session.Filter{ParentID: ptr("")}, []string{"m3", "m2", "m1"}},
		{"children of m1", session.Filter{ParentID: ptr("m1")}, []string{"c2", "c1"}},
		{"children of c1", session.Filter{ParentID: ptr("c1")}, []string{"g1"}},
		{"children of nobody", session.Filter{ParentID: ptr("zz")}, []string{}},
		{"cwd", session.Filter{Cwd: "/b"}, []string{"c3", "m2"}},
		{"main in cwd", session.Filter{ParentID: ptr(""), Cwd: "/a"}, []string{"m3", "m1"}},
		{"main in cwd, limit 1", session.Filter{ParentID: ptr(""), Cwd: "/a", Limit: 1}, []string{"m3"}},
		{"unknown cwd", session.Filter{Cwd: "/nowhere"}, []string{}},
		{"limit larger than matches", session.Filter{Cwd: "/b", Limit: 10}, []string{"c3", "m2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := idx.ListSessions(t.Context(), tt.f)
			if err != nil {
				t.Fatalf("ListSessions: %v", err)
			}
			if diff := cmp.Diff(tt.want, ids(list)); diff != "" {
				t.Errorf("ListSessions(%s) (-want +got):\n%s", describe(tt.f), diff)
			}
		})
	}
}

func describe(f session.Filter) string {
	p := "nil"
	if f.ParentID != nil {
		p = fmt.Sprintf("%q", *f.ParentID)
	}
	return fmt.Sprintf("ParentID=%s Cwd=%q Limit=%d", p, f.Cwd, f.Limit)
}

func testCanceled(t *testing.T, idx session.Index) {
	mustCreate(t, idx, sample("s1"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := idx.CreateSession(ctx, sample("s2")); !errors.Is(err, context.Canceled) {
		t.Errorf("CreateSession with a canceled context: err = %v, want context.Canceled", err)
	}
	if _, err := idx.GetSession(ctx, "s1"); !errors.Is(err, context.Canceled) {
		t.Errorf("GetSession with a canceled context: err = %v, want context.Canceled", err)
	}
	err := idx.UpdateSession(ctx, "s1", func(s *session.Info) error { s.Title = "x"; return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("UpdateSession with a canceled context: err = %v, want context.Canceled", err)
	}
	if _, err := idx.ListSessions(ctx, session.Filter{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ListSessions with a canceled context: err = %v, want context.Canceled", err)
	}
	if got := mustGet(t, idx, "s1"); got.Title != sample("s1").Title {
		t.Errorf("a canceled UpdateSession stored Title %q", got.Title)
	}
	if _, err := idx.GetSession(t.Context(), "s2"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a canceled CreateSession stored s2 (GetSession err = %v)", err)
	}
}

// testListStatusFilter: start-up recovery asks for running sessions only;
// a filter may name several statuses, as task filters do; a misspelt status
// is an error rather than a filter that silently matches nothing.
func testListStatusFilter(t *testing.T, idx session.Index) {
	for i, st := range []session.Status{session.StatusRunning, session.StatusCompleted, session.StatusRunning, session.StatusFailed, session.StatusIdle} {
		s := sample(fmt.Sprintf("s%d", i))
		s.Status, s.Updated = st, at(i+1)
		mustCreate(t, idx, s)
	}
	st := func(ss ...session.Status) []session.Status { return ss }
	for _, tt := range []struct {
		name     string
		statuses []session.Status
		want     []string
	}{
		{"running", st(session.StatusRunning), []string{"s2", "s0"}},
		{"ended", st(session.StatusCompleted, session.StatusFailed, session.StatusKilled), []string{"s3", "s1"}},
		{"status nobody has", st(session.StatusKilled), []string{}},
		{"none named is all", nil, []string{"s4", "s3", "s2", "s1", "s0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			list, err := idx.ListSessions(t.Context(), session.Filter{Statuses: tt.statuses})
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, s := range list {
				got = append(got, s.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sessions with status in %q (-want +got):\n%s", tt.statuses, diff)
			}
		})
	}
	_, err := idx.ListSessions(t.Context(), session.Filter{Statuses: st(session.StatusRunning, "done")})
	if err == nil || !strings.Contains(err.Error(), `unknown status "done"`) {
		t.Errorf("ListSessions with an unknown status: err = %v, want one naming it", err)
	}
}

// testListEndedBefore: the archive sweep asks for the child sessions that
// ended before a cutoff and are not archived yet.
func testListEndedBefore(t *testing.T, idx session.Index) {
	for _, c := range []struct {
		id       string
		parent   string
		status   session.Status
		updated  int
		archived bool
	}{
		{"done", "p", session.StatusCompleted, 10, false},
		{"failed", "p", session.StatusFailed, 20, false},
		{"killed", "p", session.StatusKilled, 30, false},
		{"running", "p", session.StatusRunning, 10, false},
		{"idle", "p", session.StatusIdle, 10, false},
		{"late", "p", session.StatusCompleted, 100, false},
		{"archived", "p", session.StatusCompleted, 10, true},
		{"main", "", session.StatusCompleted, 10, false},
	} {
		s := sample(c.id)
		s.ParentID, s.Status, s.Updated = c.parent, c.status, at(c.updated)
		if c.archived {
			s.TranscriptPath += ".deleted.1773500966535"
		}
		mustCreate(t, idx, s)
	}
	list, err := idx.ListSessions(t.Context(), session.Filter{EndedBefore: at(100)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"killed", "failed", "done"}, ids(list)); diff != "" {
		t.Errorf("child sessions ended before the cutoff, not archived (-want +got):\n%s", diff)
	}
}
