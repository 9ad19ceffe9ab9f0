package teamview

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/charmbracelet/x/ansi"
)

func TestBoardSummaryAndStatus(t *testing.T) {
	tasks := []cadre.TeamTask{
		{ID: "1", Subject: "write the parser", Status: "in_progress", Owner: "alice"},
		{ID: "2", Subject: "write the printer", Status: "completed", Owner: "bob"},
		{ID: "3", Subject: "integrate both", Status: "pending", Waiting: []string{"1", "2"}},
		{ID: "4", Subject: "docs\x1b[2J", Status: "pending", Owner: "carol"},
	}
	for _, tc := range []struct {
		name    string
		team    cadre.Team
		board   string
		summary string
		status  string
	}{
		{
			name:    "no team",
			board:   "No tasks yet: the lead and the teammates add them with TaskCreate.",
			summary: "0 teammates (none yet) · 0 tasks, 0 done",
			status:  "",
		},
		{
			name: "a team at work",
			team: cadre.Team{Name: "default", Tasks: tasks, Members: []cadre.Teammate{
				{Name: "alice", State: "working"}, {Name: "bob", State: "idle"}, {Name: "carol", State: "ended"},
			}},
			board: "In progress (1)\n  ● #1 write the parser — alice\nPending (1)\n  ○ #4 docs — carol\n" +
				"Blocked (1)\n  ◌ #3 integrate both · waits on #1, #2\nCompleted (1)\n  ✓ #2 write the printer — bob",
			summary: "3 teammates (1 working, 1 idle, 1 ended) · 4 tasks, 1 done",
			status:  "team: 1 working, 1 idle, 1 ended · 1/4 tasks done",
		},
		{
			name:    "tasks before any teammate",
			team:    cadre.Team{Tasks: tasks[1:2]},
			board:   "Completed (1)\n  ✓ #2 write the printer — bob",
			summary: "0 teammates (none yet) · 1 task, 1 done",
			status:  "team: none yet · 1/1 tasks done",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ansi.Strip(strings.Join(Board(tc.team, 80), "\n")); got != tc.board {
				t.Errorf("Board:\n%s\nwant:\n%s", got, tc.board)
			}
			if got := Summary(tc.team); got != tc.summary {
				t.Errorf("Summary = %q, want %q", got, tc.summary)
			}
			if got := Status(tc.team); got != tc.status {
				t.Errorf("Status = %q, want %q", got, tc.status)
			}
		})
	}
}

// TestEmptyTeamSaysHowOneComes: with no teammates the screen says how a
// team comes about, each line within the width.
func TestEmptyTeamSaysHowOneComes(t *testing.T) {
	s := New(Config{}, cadre.Team{})
	view := ansi.Strip(s.View(40, 20))
	if !strings.Contains(view, "CADRE_AGENT_TEAMS=1") || !strings.Contains(view, "No tasks yet") {
		t.Errorf("the empty team screen:\n%s", view)
	}
	lines := strings.Split(view, "\n")
	if len(lines) != 20 {
		t.Errorf("%d lines for a 20-row window:\n%s", len(lines), view)
	}
	for _, l := range lines {
		if ansi.StringWidth(l) > 40 {
			t.Errorf("a line wider than the window: %q", l)
		}
	}
}
