package view_test

import (
	"testing"

	"github.com/cadre-dev/cadre/record"
	"github.com/cadre-dev/cadre/view"
)

func TestTeamBoardCountsAndMember(t *testing.T) {
	tm := view.Team{
		Name: "default",
		Members: []view.Teammate{
			{ID: "a1", Name: "alice", State: "working"},
			{ID: "b2", Name: "bob", State: "idle"},
			{ID: "c3", Name: "carol", State: "ended"},
		},
		Tasks: []record.TeamTask{
			{ID: "1", Status: "completed", Owner: "alice"},
			{ID: "2", Status: "in_progress", Owner: "bob"},
			{ID: "3", Status: "pending", BlockedBy: []string{"2"}, Waiting: []string{"2"}},
			{ID: "4", Status: "pending", BlockedBy: []string{"1"}, Waiting: []string{}},
			{ID: "5", Status: "pending", Owner: "carol"},
		},
	}
	ids := func(ts []record.TeamTask) (out []string) {
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return out
	}
	b := tm.Board()
	for _, tc := range []struct {
		group string
		got   []string
		want  []string
	}{
		{"in progress", ids(b.InProgress), []string{"2"}},
		// #4 waited on #1, which is done: it is free now.
		{"pending", ids(b.Pending), []string{"4", "5"}},
		{"blocked", ids(b.Blocked), []string{"3"}},
		{"completed", ids(b.Completed), []string{"1"}},
	} {
		if len(tc.got) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.group, tc.got, tc.want)
			continue
		}
		for i := range tc.got {
			if tc.got[i] != tc.want[i] {
				t.Errorf("%s: %v, want %v", tc.group, tc.got, tc.want)
				break
			}
		}
	}
	if got, want := tm.Counts(), (view.TeamCounts{Working: 1, Idle: 1, Ended: 1, Tasks: 5, Done: 1}); got != want {
		t.Errorf("Counts() = %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		name, want string
	}{
		{"alice", "a1"}, {"BOB", "b2"}, {"c3", "c3"}, {"dave", ""}, {"", ""},
	} {
		m, ok := tm.Member(tc.name)
		if ok != (tc.want != "") || m.ID != tc.want {
			t.Errorf("Member(%q) = %+v, %v; want id %q", tc.name, m, ok, tc.want)
		}
	}
}
