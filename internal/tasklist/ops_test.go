package tasklist

import (
	"strings"
	"testing"
	"time"
)

var at = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func TestBadInput(t *testing.T) {
	str := func(s string) *string { return &s }
	st := func(s Status) *Status { return &s }
	cases := []struct {
		name   string
		create *CreateInput
		update *UpdateInput
		want   string
	}{
		{"empty subject", &CreateInput{Subject: "  "}, nil, "subject: empty"},
		{"long subject", &CreateInput{Subject: strings.Repeat("s", MaxSubject+1)}, nil, "subject: 201 bytes"},
		{"long description", &CreateInput{Subject: "s", Description: strings.Repeat("d", MaxDescription+1)}, nil, "description:"},
		{"big metadata", &CreateInput{Subject: "s", Metadata: map[string]any{"k": strings.Repeat("m", MaxMetadata)}}, nil, "metadata:"},
		{"bad id", nil, &UpdateInput{ID: "one"}, `task id "one"`},
		{"zero id", nil, &UpdateInput{ID: "0"}, `task id "0"`},
		{"padded id", nil, &UpdateInput{ID: "01"}, `task id "01"`},
		{"unknown id", nil, &UpdateInput{ID: "7"}, "task #7: no such task"},
		{"bad status", nil, &UpdateInput{ID: "1", Status: st("done")}, `status "done"`},
		{"subject cleared", nil, &UpdateInput{ID: "1", Subject: str(" ")}, "a task keeps a title"},
		{"too many edges", nil, &UpdateInput{ID: "1", AddBlocks: make([]string, MaxEdges+1)}, "at most 100"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := &List{ID: "t", Next: 1}
			if _, err := Create(l, CreateInput{Subject: "first"}, "main", at); err != nil {
				t.Fatal(err)
			}
			before := l.Clone()
			var err error
			if c.create != nil {
				_, err = Create(l, *c.create, "main", at)
			} else {
				_, err = Update(l, *c.update, "main", at)
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if l.Next != before.Next || len(l.Items) != 1 || l.Items[0].Subject != "first" {
				t.Errorf("a refused call changed the list: %+v", l)
			}
		})
	}
}

func TestListFull(t *testing.T) {
	l := &List{ID: "t"}
	for range MaxItems {
		if _, err := Create(l, CreateInput{Subject: "s"}, "main", at); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Create(l, CreateInput{Subject: "one more"}, "main", at); err == nil || !strings.Contains(err.Error(), "the most it may hold") {
		t.Errorf("creating item %d: %v", MaxItems+1, err)
	}
}

func TestItemText(t *testing.T) {
	l := &List{ID: "t"}
	Create(l, CreateInput{Subject: "a", Description: "do a"}, "main", at)
	Create(l, CreateInput{Subject: "b", Description: "do b"}, "main", at)
	if _, err := Update(l, UpdateInput{ID: "2", AddBlockedBy: []string{"1"}}, "main", at); err != nil {
		t.Fatal(err)
	}
	it, _ := l.Item("2")
	if got, want := it.Text(), "Task #2: b\nStatus: pending\nBlocked by: #1\nDescription: do b"; got != want {
		t.Errorf("TaskGet text:\n%s\nwant\n%s", got, want)
	}
	if got, want := l.Text(), "#1 [pending] a\n#2 [pending] b [blocked by #1]"; got != want {
		t.Errorf("TaskList text:\n%s\nwant\n%s", got, want)
	}
}

// TestClaimOfAnOwnedTaskFails: moving a task another agent owns to
// in_progress is a claim, and it fails — whether the owner is still at it
// or has completed it. A teammate working from a list it read a moment
// before (the task still pending there) used to get "Updated" back, with
// no owner change, and the owner's completed task went back to
// in_progress: done by one, reopened by another, never completed again.
func TestClaimOfAnOwnedTaskFails(t *testing.T) {
	st := func(s Status) *Status { return &s }
	for _, c := range []struct {
		name  string
		after Status // the owner's last status before the other's claim
	}{{"in progress", InProgress}, {"completed", Completed}} {
		t.Run(c.name, func(t *testing.T) {
			l := &List{ID: "t", Next: 1}
			if _, err := Create(l, CreateInput{Subject: "one"}, "main", at); err != nil {
				t.Fatal(err)
			}
			if _, err := Update(l, UpdateInput{ID: "1", Status: st(InProgress)}, "alice", at); err != nil {
				t.Fatal(err)
			}
			if c.after == Completed {
				if _, err := Update(l, UpdateInput{ID: "1", Status: st(Completed)}, "alice", at); err != nil {
					t.Fatal(err)
				}
			}
			before := l.Clone()
			_, err := Update(l, UpdateInput{ID: "1", Status: st(InProgress)}, "bob", at.Add(time.Second))
			if err == nil || !strings.Contains(err.Error(), "task #1 is already owned by alice") {
				t.Fatalf("bob's claim of alice's task: %v, want it refused", err)
			}
			if it, _ := l.Item("1"); it.Status != c.after || it.Owner != "alice" || !it.Updated.Equal(before.Items[0].Updated) {
				t.Errorf("after bob's refused claim: %+v, want it as alice left it", *it)
			}
		})
	}
}
