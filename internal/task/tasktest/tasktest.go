package tasktest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// Run tests a Store implementation. newStore must return a fresh, empty
// store for each call, and arrange its cleanup with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) task.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s task.Store)
	}{
		{"CreateGet", testCreateGet},
		{"TimesToTheMillisecondInUTC", testTimes},
		{"InvalidCreate", testInvalidCreate},
		{"Duplicate", testDuplicate},
		{"NotFound", testNotFound},
		{"Update", testUpdate},
		{"UnknownCost", testUnknownCost},
		{"RemoteTaskID", testRemoteTaskID},
		{"UpdateError", testUpdateError},
		{"UpdateInvalid", testUpdateInvalid},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"ListOrder", testListOrder},
		{"ListFilters", testListFilters},
		{"ListArchiveFilters", testListArchiveFilters},
		{"ListUnknownStatus", testListUnknownStatus},
		{"MarkNotified", testMarkNotified},
		{"MarkNotifiedUnfinished", testMarkNotifiedUnfinished},
		{"MarkNotifiedExactlyOnce", func(t *testing.T, s task.Store) { RaceMarkNotified(t, s) }},
		{"EndClaimsNotified", func(t *testing.T, s task.Store) { RaceEndClaim(t, s) }},
		{"CanceledContext", testCanceled},
		{"Lifecycle", testLifecycle},
		{"UpdateKeepsStatus", testUpdateKeepsStatus},
		{"TransitionFn", testTransitionFn},
		{"ConcurrentEnds", func(t *testing.T, s task.Store) { RaceEnds(t, s) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
}

// base is a fixed instant, already in the form a Store keeps.
var base = time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

func at(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

// Sample is a running local-agent task with every field set, in the form a
// Store returns it (times in UTC, whole milliseconds).
func Sample(id string) task.Task {
	return task.Task{
		ID:              id,
		Kind:            task.KindLocalAgent,
		Agent:           "explorer",
		Name:            "scout",
		Description:     "Find the config loader",
		Prompt:          "Where is the config loaded?\nAnswer with paths.",
		ParentSessionID: "parent-1",
		RootSessionID:   "root-1",
		ChildSessionID:  id,
		ToolUseID:       "toolu_01ABC",
		Status:          task.StatusRunning,
		Result:          "partial: internal/config/…",
		Progress:        "reading internal/config/load.go",
		Error:           "",
		Usage: llm.Usage{
			InputTokens:              1_234_567_890_123,
			OutputTokens:             42,
			CacheCreationInputTokens: 7,
			CacheReadInputTokens:     99_999,
		},
		CostUSD:         llm.USD(0.125),
		ToolUses:        3,
		OutputFile:      "/home/u/.cadre/tasks/" + id + ".output",
		Notified:        false,
		CancelRequested: true,
		Owner:           "4242-0123456789abcdef",
		Heartbeat:       at(900),
		Created:         base,
		Started:         at(10),
		Finished:        time.Time{},
	}
}

var timeEqual = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) })

func mustCreate(t *testing.T, s task.Store, tk task.Task) {
	t.Helper()
	if err := s.CreateTask(t.Context(), tk); err != nil {
		t.Fatalf("CreateTask(%q): %v", tk.ID, err)
	}
}

func mustGet(t *testing.T, s task.Store, id string) task.Task {
	t.Helper()
	got, err := s.GetTask(t.Context(), id)
	if err != nil {
		t.Fatalf("GetTask(%q): %v", id, err)
	}
	return got
}

func testCreateGet(t *testing.T, s task.Store) {
	full := Sample("t1")
	full.Error = "boom"
	full.Status = task.StatusFailed
	full.Finished = at(2000)
	full.Notified = true
	mustCreate(t, s, full)
	if diff := cmp.Diff(full, mustGet(t, s, "t1"), timeEqual); diff != "" {
		t.Errorf("GetTask after CreateTask, every field set (-want +got):\n%s", diff)
	}

	// Only what a record needs: every other field empty, every time zero.
	bare := task.Task{ID: "t2", Kind: task.KindLocalBash, Status: task.StatusPending}
	mustCreate(t, s, bare)
	got := mustGet(t, s, "t2")
	if diff := cmp.Diff(bare, got); diff != "" {
		t.Errorf("GetTask of a record with empty fields (-want +got):\n%s", diff)
	}
	for name, tm := range map[string]time.Time{"Created": got.Created, "Started": got.Started, "Finished": got.Finished, "Heartbeat": got.Heartbeat} {
		if !tm.IsZero() {
			t.Errorf("%s = %v, want the zero time", name, tm)
		}
	}

	// ListTasks returns whole records too.
	list, err := s.ListTasks(t.Context(), task.Filter{})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if diff := cmp.Diff([]task.Task{full, bare}, list, timeEqual); diff != "" {
		t.Errorf("ListTasks records (-want +got):\n%s", diff)
	}
}

func testTimes(t *testing.T, s task.Store) {
	loc := time.FixedZone("UTC+5", 5*3600)
	tk := Sample("t1")
	tk.Created = time.Date(2026, 1, 2, 3, 4, 5, 678_912_345, loc)
	tk.Started = time.Now() // carries a monotonic reading
	tk.Heartbeat = time.Date(2026, 1, 2, 3, 4, 6, 999_999_999, loc)
	tk.Finished = time.Unix(0, 0) // the epoch is a time, not "unset"
	mustCreate(t, s, tk)
	got := mustGet(t, s, "t1")
	for _, c := range []struct {
		name      string
		got, sent time.Time
	}{
		{"Created", got.Created, tk.Created},
		{"Started", got.Started, tk.Started},
		{"Heartbeat", got.Heartbeat, tk.Heartbeat},
		{"Finished", got.Finished, tk.Finished},
	} {
		want := c.sent.UTC().Truncate(time.Millisecond)
		if !c.got.Equal(want) || c.got.Location() != time.UTC || c.got.IsZero() {
			t.Errorf("%s = %v, want %v (UTC, to the millisecond)", c.name, c.got, want)
		}
	}

	// UpdateTask returns the record as stored: normalised the same way.
	sent := time.Date(2026, 5, 6, 7, 8, 9, 123_456_789, loc)
	updated, err := s.UpdateTask(t.Context(), "t1", func(tk *task.Task) error { tk.Finished = sent; return nil })
	if err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	want := sent.UTC().Truncate(time.Millisecond)
	if !updated.Finished.Equal(want) || updated.Finished.Location() != time.UTC {
		t.Errorf("UpdateTask returned Finished = %v, want %v", updated.Finished, want)
	}
	if diff := cmp.Diff(mustGet(t, s, "t1"), updated); diff != "" {
		t.Errorf("UpdateTask's result differs from the stored record (-stored +returned):\n%s", diff)
	}
}

func testInvalidCreate(t *testing.T, s task.Store) {
	tests := []struct {
		name    string
		edit    func(*task.Task)
		wantErr string
	}{
		{"empty id", func(tk *task.Task) { tk.ID = "" }, "empty"},
		{"traversal", func(tk *task.Task) { tk.ID = "../x" }, `"../x"`},
		{"separator", func(tk *task.Task) { tk.ID = "a/b" }, `"a/b"`},
		{"too long", func(tk *task.Task) { tk.ID = strings.Repeat("x", 129) }, "limit is 128"},
		{"unknown status", func(tk *task.Task) { tk.Status = "done" }, `unknown status "done"`},
		{"no status", func(tk *task.Task) { tk.Status = "" }, "unknown status"},
		{"unknown kind", func(tk *task.Task) { tk.Kind = "cron" }, `unknown kind "cron"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := Sample("t1")
			tt.edit(&tk)
			err := s.CreateTask(t.Context(), tk)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("CreateTask(%s): err = %v, want one containing %q", tt.name, err, tt.wantErr)
			}
			list, err := s.ListTasks(t.Context(), task.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 0 {
				t.Errorf("a refused CreateTask stored %d tasks", len(list))
			}
		})
	}
	err := s.CreateTask(t.Context(), task.Task{ID: "../etc", Kind: task.KindLocalAgent, Status: task.StatusPending})
	if !errors.Is(err, task.ErrInvalidID) {
		t.Errorf("CreateTask with a traversal id: err = %v, want one wrapping ErrInvalidID", err)
	}
}

func testDuplicate(t *testing.T, s task.Store) {
	first := Sample("t1")
	mustCreate(t, s, first)
	second := Sample("t1")
	second.Description = "impostor"
	err := s.CreateTask(t.Context(), second)
	if err == nil {
		t.Fatal("CreateTask with an existing id succeeded, want an error")
	}
	if !strings.Contains(err.Error(), "t1") || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("CreateTask of a duplicate: err = %q, want it to name the id and say it already exists", err)
	}
	if got := mustGet(t, s, "t1"); got.Description != first.Description {
		t.Errorf("after a refused duplicate, Description = %q, want %q", got.Description, first.Description)
	}
}

func testNotFound(t *testing.T, s task.Store) {
	mustCreate(t, s, Sample("t1"))
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, task.ErrNotFound) {
			t.Errorf("%s of a missing task: err = %v, want one wrapping ErrNotFound", op, err)
		} else if !strings.Contains(err.Error(), "nope") {
			t.Errorf("%s of a missing task: err = %q, want it to name the id %q", op, err, "nope")
		}
	}
	_, err := s.GetTask(t.Context(), "nope")
	check("GetTask", err)
	called := false
	_, err = s.UpdateTask(t.Context(), "nope", func(*task.Task) error { called = true; return nil })
	check("UpdateTask", err)
	if called {
		t.Error("UpdateTask called fn for a missing task")
	}
	ok, err := s.MarkNotified(t.Context(), "nope")
	check("MarkNotified", err)
	if ok {
		t.Error("MarkNotified of a missing task returned true")
	}
}

func testUpdate(t *testing.T, s task.Store) {
	mustCreate(t, s, Sample("t1"))
	got, err := s.Transition(t.Context(), "t1", func(tk *task.Task) (task.Event, error) {
		tk.Result = "found it"
		tk.Usage = tk.Usage.Add(llm.Usage{InputTokens: 1, OutputTokens: 2, CacheCreationInputTokens: 3, CacheReadInputTokens: 4})
		tk.CostUSD = tk.CostUSD.Add(llm.USD(1))
		tk.ToolUses++
		tk.CancelRequested = false
		tk.Owner = ""
		tk.Heartbeat = time.Time{}
		tk.Finished = at(5000)
		return task.EventComplete, nil
	})
	if err != nil {
		t.Fatalf("Transition: %v", err)
	}
	want := Sample("t1")
	want.Status = task.StatusCompleted
	want.Result = "found it"
	want.Usage = llm.Usage{InputTokens: 1_234_567_890_124, OutputTokens: 44, CacheCreationInputTokens: 10, CacheReadInputTokens: 100_003}
	want.CostUSD = llm.USD(1.125)
	want.ToolUses = 4
	want.CancelRequested = false
	want.Owner = ""
	want.Heartbeat = time.Time{}
	want.Finished = at(5000)
	if diff := cmp.Diff(want, got, timeEqual); diff != "" {
		t.Errorf("Transition result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, mustGet(t, s, "t1"), timeEqual); diff != "" {
		t.Errorf("after Transition (-want +got):\n%s", diff)
	}
}

// testRemoteTaskID: a remote_agent task's remote id is absent until the
// server names it, is kept once recorded by an update, survives updates of
// other fields, and can be cleared again (S-W2).
func testRemoteTaskID(t *testing.T, s task.Store) {
	tk := Sample("t1")
	tk.Kind, tk.Status = task.KindRemoteAgent, task.StatusRunning
	mustCreate(t, s, tk)
	if got := mustGet(t, s, "t1").RemoteTaskID; got != "" {
		t.Fatalf("created without a remote id, read back %q", got)
	}
	const rid = "0197a1b2-remote-task"
	if _, err := s.UpdateTask(t.Context(), "t1", func(tk *task.Task) error { tk.RemoteTaskID = rid; return nil }); err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	if _, err := s.UpdateTask(t.Context(), "t1", func(tk *task.Task) error { tk.Progress = "working"; return nil }); err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	if got := mustGet(t, s, "t1"); got.RemoteTaskID != rid || got.Progress != "working" {
		t.Errorf("after recording it and updating the progress: remote id %q, progress %q; want %q, working", got.RemoteTaskID, got.Progress, rid)
	}
	list, err := s.ListTasks(t.Context(), task.Filter{Statuses: []task.Status{task.StatusRunning}})
	if err != nil || len(list) != 1 || list[0].RemoteTaskID != rid {
		t.Errorf("ListTasks: %v, %v; want t1 with remote id %q", list, err, rid)
	}
	created := Sample("t2")
	created.Kind, created.RemoteTaskID = task.KindRemoteAgent, "given-at-create"
	mustCreate(t, s, created)
	if got := mustGet(t, s, "t2").RemoteTaskID; got != created.RemoteTaskID {
		t.Errorf("created with remote id %q, read back %q", created.RemoteTaskID, got)
	}
	if _, err := s.UpdateTask(t.Context(), "t2", func(tk *task.Task) error { tk.RemoteTaskID = ""; return nil }); err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	if got := mustGet(t, s, "t2").RemoteTaskID; got != "" {
		t.Errorf("after clearing it, read back %q", got)
	}
}

// testUnknownCost: a cost with an unpriced part reads back unknown, with
// the priced part kept, on create and after an update; never as $0.
func testUnknownCost(t *testing.T, s task.Store) {
	tk := Sample("t1")
	tk.CostUSD = llm.USD(0.5).Add(llm.UnknownCost())
	mustCreate(t, s, tk)
	if got := mustGet(t, s, "t1").CostUSD; got != tk.CostUSD {
		t.Errorf("created with cost %v (%#v), read back %v (%#v)", tk.CostUSD, tk.CostUSD, got, got)
	}
	mustCreate(t, s, Sample("t2"))
	_, err := s.UpdateTask(t.Context(), "t2", func(tk *task.Task) error {
		tk.CostUSD = tk.CostUSD.Add(llm.UnknownCost())
		return nil
	})
	if err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	got := mustGet(t, s, "t2").CostUSD
	if v, known := got.USD(); known || v != 0.125 {
		t.Errorf("after adding an unknown cost, read back %v, %v; want 0.125, unknown", v, known)
	}
}

func testUpdateError(t *testing.T, s task.Store) {
	mustCreate(t, s, Sample("t1"))
	boom := errors.New("boom")
	got, err := s.UpdateTask(t.Context(), "t1", func(tk *task.Task) error {
		tk.Status = task.StatusKilled
		tk.ToolUses = 99
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateTask err = %v, want one wrapping fn's error", err)
	}
	if diff := cmp.Diff(task.Task{}, got); diff != "" {
		t.Errorf("a failed UpdateTask returned a record (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Sample("t1"), mustGet(t, s, "t1"), timeEqual); diff != "" {
		t.Errorf("fn failed but its changes were stored (-want +got):\n%s", diff)
	}
}

func testUpdateInvalid(t *testing.T, s task.Store) {
	mustCreate(t, s, Sample("t1"))
	tests := []struct {
		name    string
		edit    func(*task.Task)
		wantErr string
	}{
		{"changes the id", func(tk *task.Task) { tk.ID = "t2" }, `changed the id to "t2"`},
		{"unknown status", func(tk *task.Task) { tk.Status = "finished" }, `unknown status "finished"`},
		{"unknown kind", func(tk *task.Task) { tk.Kind = "" }, "unknown kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.UpdateTask(t.Context(), "t1", func(tk *task.Task) error {
				tk.Result = "should not be stored"
				tt.edit(tk)
				return nil
			})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("UpdateTask that %s: err = %v, want one containing %q", tt.name, err, tt.wantErr)
			}
			if diff := cmp.Diff(Sample("t1"), mustGet(t, s, "t1"), timeEqual); diff != "" {
				t.Errorf("a refused update was stored (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := s.GetTask(t.Context(), "t2"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetTask(t2) err = %v, want ErrNotFound", err)
	}
}

// testConcurrentUpdates checks that read-modify-write is atomic: no
// increment may be lost.
func testConcurrentUpdates(t *testing.T, s task.Store) {
	tk := Sample("t1")
	tk.ToolUses = 0
	tk.Usage = llm.Usage{}
	mustCreate(t, s, tk)
	const workers, each = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				_, err := s.UpdateTask(t.Context(), "t1", func(tk *task.Task) error {
					tk.ToolUses++
					tk.Usage.OutputTokens += 10
					return nil
				})
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent UpdateTask: %v", err)
		}
	}
	got := mustGet(t, s, "t1")
	if got.ToolUses != workers*each || got.Usage.OutputTokens != 10*workers*each {
		t.Errorf("after %d concurrent increments: ToolUses = %d, OutputTokens = %d; want %d and %d (an update was lost)",
			workers*each, got.ToolUses, got.Usage.OutputTokens, workers*each, 10*workers*each)
	}
}

func ids(list []task.Task) []string {
	out := make([]string, len(list))
	for i, tk := range list {
		out[i] = tk.ID
	}
	return out
}

func testListOrder(t *testing.T, s task.Store) {
	// Creation order differs from Created order, and b/c tie on Created.
	for _, c := range []struct {
		id      string
		created int
	}{{"a", 10}, {"b", 30}, {"c", 30}, {"d", 20}, {"e", 5}} {
		tk := Sample(c.id)
		tk.Created = at(c.created)
		tk.Started = at(-c.created) // must not affect the order
		mustCreate(t, s, tk)
	}
	list, err := s.ListTasks(t.Context(), task.Filter{})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if diff := cmp.Diff([]string{"c", "b", "d", "a", "e"}, ids(list)); diff != "" {
		t.Errorf("ListTasks order: newest Created first, ties by greater id (-want +got):\n%s", diff)
	}
	list, err = s.ListTasks(t.Context(), task.Filter{Limit: 2})
	if err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if diff := cmp.Diff([]string{"c", "b"}, ids(list)); diff != "" {
		t.Errorf("ListTasks with limit 2 (-want +got):\n%s", diff)
	}
}

func testListFilters(t *testing.T, s task.Store) {
	add := func(id, root, parent, owner string, status task.Status, created int) {
		tk := Sample(id)
		tk.RootSessionID, tk.ParentSessionID, tk.Owner, tk.Status, tk.Created = root, parent, owner, status, at(created)
		mustCreate(t, s, tk)
	}
	// Two run trees (roots r1, r2); in r1, child c1 launched grandchild tasks.
	add("t1", "r1", "r1", "o1", task.StatusRunning, 1)
	add("t2", "r1", "r1", "o1", task.StatusCompleted, 2)
	add("t3", "r1", "c1", "o1", task.StatusPending, 3)
	add("t4", "r1", "c1", "o2", task.StatusFailed, 4)
	add("t5", "r2", "r2", "o2", task.StatusRunning, 5)
	add("t6", "r2", "r2", "o2", task.StatusKilled, 6)
	add("t7", "r2", "r2", "", task.StatusTimeout, 7)

	st := func(ss ...task.Status) []task.Status { return ss }
	tests := []struct {
		name string
		f    task.Filter
		want []string
	}{
		{"all", task.Filter{}, []string{"t7", "t6", "t5", "t4", "t3", "t2", "t1"}},
		{"root", task.Filter{RootSessionID: "r1"}, []string{"t4", "t3", "t2", "t1"}},
		{"parent", task.Filter{ParentSessionID: "c1"}, []string{"t4", "t3"}},
		{"root and parent", task.Filter{RootSessionID: "r2", ParentSessionID: "r2"}, []string{"t7", "t6", "t5"}},
		{"owner", task.Filter{Owner: "o2"}, []string{"t6", "t5", "t4"}},
		{"one status", task.Filter{Statuses: st(task.StatusRunning)}, []string{"t5", "t1"}},
		{"unfinished", task.Filter{Statuses: st(task.StatusPending, task.StatusRunning)}, []string{"t5", "t3", "t1"}},
		{"terminal", task.Filter{Statuses: st(task.StatusCompleted, task.StatusFailed, task.StatusKilled, task.StatusTimeout)},
			[]string{"t7", "t6", "t4", "t2"}},
		{"owner and statuses", task.Filter{Owner: "o1", Statuses: st(task.StatusPending, task.StatusRunning)}, []string{"t3", "t1"}},
		{"everything at once", task.Filter{RootSessionID: "r1", ParentSessionID: "c1", Owner: "o2", Statuses: st(task.StatusFailed)}, []string{"t4"}},
		{"root, limit 2", task.Filter{RootSessionID: "r1", Limit: 2}, []string{"t4", "t3"}},
		{"limit larger than matches", task.Filter{ParentSessionID: "c1", Limit: 10}, []string{"t4", "t3"}},
		{"negative limit is none", task.Filter{ParentSessionID: "c1", Limit: -1}, []string{"t4", "t3"}},
		{"unknown root", task.Filter{RootSessionID: "nowhere"}, []string{}},
		{"status nobody has", task.Filter{Owner: "o1", Statuses: st(task.StatusTimeout)}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := s.ListTasks(t.Context(), tt.f)
			if err != nil {
				t.Fatalf("ListTasks: %v", err)
			}
			if list == nil {
				t.Error("ListTasks returned nil, want an empty slice")
			}
			if diff := cmp.Diff(tt.want, ids(list)); diff != "" {
				t.Errorf("ListTasks(%+v) (-want +got):\n%s", tt.f, diff)
			}
		})
	}
}

func testListUnknownStatus(t *testing.T, s task.Store) {
	mustCreate(t, s, Sample("t1"))
	_, err := s.ListTasks(t.Context(), task.Filter{Statuses: []task.Status{task.StatusRunning, "cancelled"}})
	if err == nil || !strings.Contains(err.Error(), `unknown status "cancelled"`) {
		t.Errorf("ListTasks with an unknown status: err = %v, want one naming it", err)
	}
}

func testMarkNotified(t *testing.T, s task.Store) {
	tk := Sample("t1")
	tk.Status = task.StatusCompleted
	mustCreate(t, s, tk)
	for i, want := range []bool{true, false, false} {
		got, err := s.MarkNotified(t.Context(), "t1")
		if err != nil {
			t.Fatalf("MarkNotified call %d: %v", i+1, err)
		}
		if got != want {
			t.Errorf("MarkNotified call %d = %v, want %v", i+1, got, want)
		}
	}
	want := tk
	want.Notified = true
	if diff := cmp.Diff(want, mustGet(t, s, "t1"), timeEqual); diff != "" {
		t.Errorf("after MarkNotified, only Notified should change (-want +got):\n%s", diff)
	}

	// The flag is data: a resumed run clears it, and its next end notifies again.
	_, err := s.Transition(t.Context(), "t1", func(tk *task.Task) (task.Event, error) {
		tk.Notified = false
		return task.EventResume, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Transition(t.Context(), "t1", func(tk *task.Task) (task.Event, error) { return task.EventStop, nil })
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.MarkNotified(t.Context(), "t1"); err != nil || !got {
		t.Errorf("MarkNotified after the flag was cleared = %v, %v; want true", got, err)
	}
}

func testMarkNotifiedUnfinished(t *testing.T, s task.Store) {
	for _, st := range []task.Status{task.StatusPending, task.StatusRunning} {
		t.Run(string(st), func(t *testing.T) {
			tk := Sample("t-" + string(st))
			tk.Status = st
			mustCreate(t, s, tk)
			got, err := s.MarkNotified(t.Context(), tk.ID)
			if !errors.Is(err, task.ErrNotTerminal) || !strings.Contains(err.Error(), tk.ID) {
				t.Errorf("MarkNotified of a %s task = %v, %v; want an error wrapping ErrNotTerminal and naming the id", st, got, err)
			}
			if got {
				t.Errorf("MarkNotified of a %s task returned true", st)
			}
			if mustGet(t, s, tk.ID).Notified {
				t.Errorf("MarkNotified set Notified on a %s task", st)
			}
		})
	}
}

// RaceMarkNotified creates 50 finished tasks through stores[0] and, for each,
// has 16 goroutines call MarkNotified at once, spread over stores; exactly
// one call per task must return true. Pass several handles of one database
// to race them as separate processes would.
func RaceMarkNotified(t *testing.T, stores ...task.Store) {
	t.Helper()
	const tasks, callers = 50, 16
	statuses := []task.Status{task.StatusCompleted, task.StatusFailed, task.StatusKilled, task.StatusTimeout}
	for i := range tasks {
		tk := Sample(fmt.Sprintf("race-%02d", i))
		tk.Status = statuses[i%len(statuses)]
		mustCreate(t, stores[0], tk)
	}
	for i := range tasks {
		id := fmt.Sprintf("race-%02d", i)
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			wins  = make(chan bool, callers)
			errs  = make(chan error, callers)
		)
		for c := range callers {
			s := stores[c%len(stores)]
			wg.Go(func() {
				<-start // release them together, to make the race real
				ok, err := s.MarkNotified(t.Context(), id)
				wins <- ok
				errs <- err
			})
		}
		close(start)
		wg.Wait()
		close(wins)
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("MarkNotified(%s): %v", id, err)
			}
		}
		n := 0
		for ok := range wins {
			if ok {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("MarkNotified(%s) returned true to %d of %d racing callers, want exactly 1", id, n, callers)
		}
		for j, s := range stores {
			got, err := s.GetTask(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Notified {
				t.Fatalf("store %d: %s not Notified after MarkNotified", j, id)
			}
		}
	}
}

// RaceEndClaim checks the other way to win the notified flag: the
// Transition that records a task's terminal status and sets Notified in the
// same write (the runtime's, when no reader watches the run). For each of
// 30 running tasks (created through stores[0]), 8 goroutines spread over
// stores call MarkNotified while that update runs; the update must see the
// flag unset and no MarkNotified may win: each finds the task unfinished
// (ErrNotTerminal) or already notified (false), never finished but
// unclaimed.
func RaceEndClaim(t *testing.T, stores ...task.Store) {
	t.Helper()
	const tasks, callers = 30, 8
	for i := range tasks {
		id := fmt.Sprintf("end-%02d", i)
		tk := Sample(id)
		tk.Status = task.StatusRunning
		mustCreate(t, stores[0], tk)
		var (
			wg     sync.WaitGroup
			start  = make(chan struct{})
			wins   = make(chan bool, callers)
			errs   = make(chan error, callers+1)
			sawSet bool
		)
		for c := range callers {
			s := stores[c%len(stores)]
			wg.Go(func() {
				<-start
				ok, err := s.MarkNotified(t.Context(), id)
				wins <- ok
				errs <- err
			})
		}
		wg.Go(func() {
			<-start
			_, err := stores[0].Transition(t.Context(), id, func(tk *task.Task) (task.Event, error) {
				sawSet = tk.Notified
				tk.Notified = true
				return task.EventComplete, nil
			})
			errs <- err
		})
		close(start)
		wg.Wait()
		close(wins)
		close(errs)
		for err := range errs {
			if err != nil && !errors.Is(err, task.ErrNotTerminal) {
				t.Fatalf("%s: %v", id, err)
			}
		}
		for ok := range wins {
			if ok {
				t.Fatalf("%s: MarkNotified won a flag the terminal update claimed", id)
			}
		}
		if sawSet {
			t.Fatalf("%s: the terminal update found the flag already set", id)
		}
		if got := mustGet(t, stores[0], id); !got.Notified || got.Status != task.StatusCompleted {
			t.Fatalf("%s after the terminal update: status %s, notified %v", id, got.Status, got.Notified)
		}
	}
}

func testCanceled(t *testing.T, s task.Store) {
	done := Sample("t1")
	done.Status = task.StatusCompleted
	mustCreate(t, s, done)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	check := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a canceled context: err = %v, want context.Canceled", op, err)
		}
	}
	check("CreateTask", s.CreateTask(ctx, Sample("t2")))
	_, err := s.GetTask(ctx, "t1")
	check("GetTask", err)
	_, err = s.UpdateTask(ctx, "t1", func(tk *task.Task) error { tk.Result = "x"; return nil })
	check("UpdateTask", err)
	_, err = s.Transition(ctx, "t1", func(tk *task.Task) (task.Event, error) { return task.EventResume, nil })
	check("Transition", err)
	_, err = s.ListTasks(ctx, task.Filter{})
	check("ListTasks", err)
	ok, err := s.MarkNotified(ctx, "t1")
	check("MarkNotified", err)
	if ok {
		t.Error("a canceled MarkNotified returned true")
	}

	if diff := cmp.Diff(done, mustGet(t, s, "t1"), timeEqual); diff != "" {
		t.Errorf("canceled calls changed the record (-want +got):\n%s", diff)
	}
	if _, err := s.GetTask(t.Context(), "t2"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("a canceled CreateTask stored t2 (GetTask err = %v)", err)
	}
}

// testListArchiveFilters: the archive sweep asks for finished tasks older
// than a cutoff whose session is not archived yet.
func testListArchiveFilters(t *testing.T, s task.Store) {
	add := func(id string, finished int, archived bool) {
		tk := Sample(id)
		tk.Status, tk.Created, tk.Archived = task.StatusCompleted, at(finished), archived
		tk.Finished = time.Time{}
		if finished > 0 {
			tk.Finished = at(finished)
		}
		mustCreate(t, s, tk)
	}
	add("old", 1, false)
	add("old-archived", 2, true)
	add("recent", 10, false)
	add("unfinished", 0, false)
	for _, tc := range []struct {
		name string
		f    task.Filter
		want []string
	}{
		{"finished before", task.Filter{FinishedBefore: at(5)}, []string{"old-archived", "old"}},
		{"unarchived", task.Filter{Unarchived: true}, []string{"recent", "old", "unfinished"}},
		{"both", task.Filter{FinishedBefore: at(5), Unarchived: true}, []string{"old"}},
	} {
		list, err := s.ListTasks(t.Context(), tc.f)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := ids(list)
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}
