package tasklisttest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/tasklist"
)

// Open returns handles on one fresh store: one is enough, two or more (two
// connections, pools or processes' worth) let the suite race them.
type Open func(t *testing.T) []tasklist.Store

var now = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// Run runs the suite.
func Run(t *testing.T, open Open) {
	t.Run("EmptyList", func(t *testing.T) {
		st := open(t)[0]
		l, err := st.GetList(t.Context(), "team-a")
		if err != nil || l.Next != 1 || len(l.Items) != 0 {
			t.Fatalf("a list never written: %+v, %v; want empty, next 1", l, err)
		}
	})
	t.Run("CreateAndRead", func(t *testing.T) {
		st := open(t)[0]
		for i := 1; i <= 3; i++ {
			create(t, st, "team-a", fmt.Sprintf("task %d", i))
		}
		create(t, st, "team-b", "another team's task")
		l := get(t, st, "team-a")
		if len(l.Items) != 3 || l.Next != 4 {
			t.Fatalf("team-a: %d items, next %d; want 3, 4", len(l.Items), l.Next)
		}
		for i, it := range l.Items {
			if it.ID != fmt.Sprint(i+1) || it.Subject != fmt.Sprintf("task %d", i+1) || it.Status != tasklist.Pending || it.CreatedBy != "main" {
				t.Errorf("item %d: %+v", i, it)
			}
			if !it.Created.Equal(now) || it.Blocks == nil || it.BlockedBy == nil {
				t.Errorf("item %d: created %v, blocks %v, blockedBy %v", i, it.Created, it.Blocks, it.BlockedBy)
			}
		}
		if b := get(t, st, "team-b"); len(b.Items) != 1 || b.Items[0].ID != "1" {
			t.Errorf("team-b: %+v; want its own item #1", b.Items)
		}
	})
	t.Run("RosterSurvives", func(t *testing.T) {
		handles := open(t)
		st := handles[0]
		create(t, st, "team-r", "a task")
		if l := get(t, st, "team-r"); l.Roster != nil {
			t.Fatalf("a list nobody joined has roster %+v", l.Roster)
		}
		want := tasklist.Roster{Team: "red", Members: []tasklist.Member{
			{Name: "alice", Agent: "general-purpose", ID: "a-1", Call: "toolu_1", Plan: "planning"},
			{Name: "bob", Agent: "Explore"},
		}}
		if _, err := st.UpdateList(t.Context(), "team-r", func(l *tasklist.List) error {
			r := want
			r.Members = slices.Clone(want.Members)
			l.Roster = &r
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// Read back through another handle (another process's, where the
		// store is shared): the roster and the items beside it.
		l := get(t, handles[len(handles)-1], "team-r")
		if l.Roster == nil || !reflect.DeepEqual(*l.Roster, want) || len(l.Items) != 1 {
			t.Fatalf("read back: roster %+v, %d items; want %+v and 1", l.Roster, len(l.Items), want)
		}
		// A change of the roster alone is written too.
		if _, err := st.UpdateList(t.Context(), "team-r", func(l *tasklist.List) error {
			l.Roster.Members[0].Plan = "approved"
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if l := get(t, st, "team-r"); l.Roster.Members[0].Plan != "approved" || len(l.Roster.Members) != 2 {
			t.Errorf("after the plan's approval: %+v", l.Roster)
		}
	})
	t.Run("FieldsAndMetadataSurvive", func(t *testing.T) {
		st := open(t)[0]
		_, err := st.UpdateList(t.Context(), "t", func(l *tasklist.List) error {
			_, err := tasklist.Create(l, tasklist.CreateInput{Subject: "s", Description: "d", ActiveForm: "Doing s", Metadata: map[string]any{"k": "v", "n": 2.0}}, "main", now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		desc := "d2"
		ch := update(t, st, "t", tasklist.UpdateInput{ID: "1", Description: &desc, Metadata: map[string]any{"k": nil, "x": true}}, "main")
		if !slices.Equal(ch.Fields, []string{"description", "metadata"}) {
			t.Errorf("fields %v", ch.Fields)
		}
		it := get(t, st, "t").Items[0]
		if it.Description != "d2" || it.ActiveForm != "Doing s" || len(it.Metadata) != 2 || it.Metadata["x"] != true || it.Metadata["n"] != 2.0 {
			t.Errorf("after update: %+v", it)
		}
	})
	t.Run("ClaimRules", func(t *testing.T) {
		st := open(t)[0]
		for i := 1; i <= 3; i++ {
			create(t, st, "t", fmt.Sprintf("task %d", i))
		}
		update(t, st, "t", tasklist.UpdateInput{ID: "3", AddBlockedBy: []string{"1"}}, "main")
		if ch := update(t, st, "t", tasklist.UpdateInput{ID: "1", Owner: ptr("alice")}, "alice"); !ch.Claimed {
			t.Errorf("alice's claim of #1: %+v", ch)
		}
		refused(t, st, "t", tasklist.UpdateInput{ID: "1", Owner: ptr("bob")}, "bob", "already owned by alice")
		refused(t, st, "t", tasklist.UpdateInput{ID: "3", Owner: ptr("bob")}, "bob", "blocked by #1")
		refused(t, st, "t", tasklist.UpdateInput{ID: "3", Status: status(tasklist.InProgress)}, "bob", "blocked by #1")
		// in_progress on an unowned item claims it.
		ch := update(t, st, "t", tasklist.UpdateInput{ID: "2", Status: status(tasklist.InProgress)}, "bob")
		if !ch.Claimed || ch.Item.Owner != "bob" || ch.From != tasklist.Pending || ch.To != tasklist.InProgress {
			t.Errorf("bob starting #2: %+v", ch)
		}
		refused(t, st, "t", tasklist.UpdateInput{ID: "2", Owner: ptr("carol")}, "carol", "already owned by bob")
		// Completing #1 unblocks #3, which may then be claimed.
		ch = update(t, st, "t", tasklist.UpdateInput{ID: "1", Status: status(tasklist.Completed)}, "alice")
		if !slices.Equal(ch.Unblocked, []string{"3"}) {
			t.Errorf("completing #1 unblocked %v, want [3]", ch.Unblocked)
		}
		if ch := update(t, st, "t", tasklist.UpdateInput{ID: "3", Owner: ptr("bob")}, "bob"); !ch.Claimed {
			t.Errorf("bob's claim of the unblocked #3: %+v", ch)
		}
		// A completed item cannot be claimed; an owner may let go.
		refused(t, st, "t", tasklist.UpdateInput{ID: "1", Owner: ptr("bob")}, "bob", "already owned by alice")
		update(t, st, "t", tasklist.UpdateInput{ID: "1", Owner: ptr("")}, "alice")
		refused(t, st, "t", tasklist.UpdateInput{ID: "1", Owner: ptr("bob")}, "bob", "only a pending task can be claimed")
		if l := get(t, st, "t"); l.Text() != "#1 [completed] task 1\n#2 [in_progress] task 2 (bob)\n#3 [pending] task 3 (bob)" {
			t.Errorf("TaskList text:\n%s", l.Text())
		}
	})
	t.Run("DependenciesStaySymmetric", func(t *testing.T) {
		st := open(t)[0]
		for i := 1; i <= 4; i++ {
			create(t, st, "t", fmt.Sprintf("task %d", i))
		}
		update(t, st, "t", tasklist.UpdateInput{ID: "1", AddBlocks: []string{"2", "#3"}}, "main")
		update(t, st, "t", tasklist.UpdateInput{ID: "4", AddBlockedBy: []string{"3"}}, "main")
		l := get(t, st, "t")
		want := map[string][2][]string{"1": {{"2", "3"}, {}}, "2": {{}, {"1"}}, "3": {{"4"}, {"1"}}, "4": {{}, {"3"}}}
		for _, it := range l.Items {
			if w := want[it.ID]; !slices.Equal(it.Blocks, w[0]) || !slices.Equal(it.BlockedBy, w[1]) {
				t.Errorf("#%s: blocks %v blockedBy %v; want %v %v", it.ID, it.Blocks, it.BlockedBy, w[0], w[1])
			}
		}
		refused(t, st, "t", tasklist.UpdateInput{ID: "4", AddBlocks: []string{"1"}}, "main", "cycle")
		refused(t, st, "t", tasklist.UpdateInput{ID: "2", AddBlockedBy: []string{"2"}}, "main", "itself")
		refused(t, st, "t", tasklist.UpdateInput{ID: "2", AddBlockedBy: []string{"9"}}, "main", "no such task")
		refused(t, st, "t", tasklist.UpdateInput{ID: "9", Subject: ptr("x")}, "main", "no such task")
		// Deleting #3 removes it from both ends and unblocks #4.
		ch := update(t, st, "t", tasklist.UpdateInput{ID: "3", Status: status(tasklist.Deleted)}, "main")
		if !ch.Deleted || !slices.Equal(ch.Unblocked, []string{"4"}) {
			t.Errorf("deleting #3: %+v", ch)
		}
		l = get(t, st, "t")
		if len(l.Items) != 3 || !slices.Equal(l.Items[0].Blocks, []string{"2"}) || len(l.Items[2].BlockedBy) != 0 {
			t.Errorf("after deleting #3: %+v", l.Items)
		}
		// Ids are not reused.
		if it := create(t, st, "t", "task 5"); it.ID != "5" {
			t.Errorf("the next item is #%s, want #5", it.ID)
		}
	})
	t.Run("RefusedUpdateChangesNothing", func(t *testing.T) {
		st := open(t)[0]
		create(t, st, "t", "task 1")
		before := get(t, st, "t")
		boom := errors.New("boom")
		_, err := st.UpdateList(t.Context(), "t", func(l *tasklist.List) error {
			l.Items[0].Subject = "changed"
			if _, err := tasklist.Create(l, tasklist.CreateInput{Subject: "new"}, "main", now); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("UpdateList returned %v, want fn's error", err)
		}
		if after := get(t, st, "t"); after.Next != before.Next || len(after.Items) != 1 || after.Items[0].Subject != "task 1" {
			t.Errorf("a refused update changed the list: %+v", after)
		}
	})
	t.Run("BadListID", func(t *testing.T) {
		st := open(t)[0]
		if _, err := st.GetList(t.Context(), "../other"); err == nil {
			t.Error("a list id with a slash was accepted")
		}
	})
	t.Run("ConcurrentClaimersOneWins", func(t *testing.T) {
		handles := open(t)
		const rounds, claimers = 10, 6
		for range rounds {
			create(t, handles[0], "race", "contested")
		}
		for r := 1; r <= rounds; r++ {
			id := fmt.Sprint(r)
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				owners []string
				errs   []error
			)
			start := make(chan struct{})
			for c := range claimers {
				st := handles[c%len(handles)]
				who := fmt.Sprintf("claimer-%d", c)
				wg.Go(func() {
					<-start
					_, err := st.UpdateList(context.Background(), "race", func(l *tasklist.List) error {
						ch, err := tasklist.Update(l, tasklist.UpdateInput{ID: id, Owner: &who, Status: status(tasklist.InProgress)}, who, now)
						if err == nil && !ch.Claimed {
							err = errors.New("not claimed")
						}
						return err
					})
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						owners = append(owners, who)
					} else if !strings.Contains(err.Error(), "already owned by") {
						errs = append(errs, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if len(owners) != 1 || len(errs) > 0 {
				t.Fatalf("round %d: winners %v, other errors %v; want exactly one winner", r, owners, errs)
			}
			for _, st := range handles {
				if it := get(t, st, "race").Items[r-1]; it.Owner != owners[0] || it.Status != tasklist.InProgress {
					t.Fatalf("round %d: stored owner %q (%s), the winner was %s", r, it.Owner, it.Status, owners[0])
				}
			}
		}
	})
	t.Run("ConcurrentCreatesGetDistinctIDs", func(t *testing.T) {
		handles := open(t)
		const each, writers = 8, 4
		var wg sync.WaitGroup
		errs := make(chan error, each*writers)
		for w := range writers {
			st := handles[w%len(handles)]
			wg.Go(func() {
				for i := range each {
					_, err := st.UpdateList(context.Background(), "ids", func(l *tasklist.List) error {
						_, err := tasklist.Create(l, tasklist.CreateInput{Subject: fmt.Sprintf("w%d-%d", w, i)}, "main", now)
						return err
					})
					errs <- err
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
		l := get(t, handles[0], "ids")
		seen := map[string]bool{}
		for _, it := range l.Items {
			seen[it.ID] = true
		}
		if len(l.Items) != each*writers || len(seen) != each*writers || l.Next != each*writers+1 {
			t.Errorf("%d items, %d distinct ids, next %d; want %d", len(l.Items), len(seen), l.Next, each*writers)
		}
	})
}

func ptr(s string) *string                      { return &s }
func status(s tasklist.Status) *tasklist.Status { return &s }

func get(t *testing.T, st tasklist.Store, id string) tasklist.List {
	t.Helper()
	l, err := st.GetList(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func create(t *testing.T, st tasklist.Store, list, subject string) tasklist.Item {
	t.Helper()
	var it tasklist.Item
	_, err := st.UpdateList(t.Context(), list, func(l *tasklist.List) (err error) {
		it, err = tasklist.Create(l, tasklist.CreateInput{Subject: subject, Description: "about " + subject}, "main", now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return it
}

func update(t *testing.T, st tasklist.Store, list string, in tasklist.UpdateInput, by string) tasklist.Change {
	t.Helper()
	var ch tasklist.Change
	_, err := st.UpdateList(t.Context(), list, func(l *tasklist.List) (err error) {
		ch, err = tasklist.Update(l, in, by, now)
		return err
	})
	if err != nil {
		t.Fatalf("update %+v by %s: %v", in, by, err)
	}
	return ch
}

func refused(t *testing.T, st tasklist.Store, list string, in tasklist.UpdateInput, by, want string) {
	t.Helper()
	_, err := st.UpdateList(t.Context(), list, func(l *tasklist.List) error {
		_, err := tasklist.Update(l, in, by, now)
		return err
	})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("update %+v by %s: %v; want an error saying %q", in, by, err, want)
	}
}
