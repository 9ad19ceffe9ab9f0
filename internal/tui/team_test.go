package tui

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/teamview"
)

// teamConv is a steerable conversation that leads a team.
type teamConv struct {
	*steerConv
	mu    sync.Mutex
	team  cadre.Team
	reads int
}

func (c *teamConv) Team(context.Context) (cadre.Team, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads++
	return c.team, nil
}

func (c *teamConv) set(t cadre.Team) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.team = t
}

var (
	alice = cadre.Teammate{Index: 1, ID: run1.ID, Name: "alice", Agent: "general-purpose", State: "working", Task: "write the parser", Tokens: 5400}
	bob   = cadre.Teammate{Index: 2, ID: run2.ID, Name: "bob", Agent: "tester", State: "idle", Tokens: 1200}
	// team is alice on #1, #2 done by bob, #3 waiting on #1.
	team = cadre.Team{Name: "default", Members: []cadre.Teammate{alice, bob}, Tasks: []cadre.TeamTask{
		{ID: "1", Subject: "write the parser", Status: "in_progress", Owner: "alice", Waiting: []string{}},
		{ID: "2", Subject: "write the printer", Status: "completed", Owner: "bob", Waiting: []string{}},
		{ID: "3", Subject: "integrate both", Status: "pending", BlockedBy: []string{"1"}, Waiting: []string{"1"}},
	}}
)

type teamHarness struct {
	*cmdHarness
	conv *teamConv
}

func newTeamHarness(t *testing.T, rt *fakeRuntime) *teamHarness {
	h := &cmdHarness{harness: &harness{t: t, conv: &fakeConv{}, now: t0}, rt: rt}
	h.steer = &steerConv{fakeConv: h.conv, id: "0197aaaa-0000-7000-8000-0000000main0", runs: []cadre.SubagentRun{run1, run2}}
	tc := &teamConv{steerConv: h.steer}
	h.m = New(t.Context(), Config{
		Conversation: tc, Approvals: cadre.NewApprovals(), Model: "sonnet", Mode: cadre.PermissionDefault,
		Agents: []string{"reviewer"}, Now: func() time.Time { return h.now }, Runtime: rt,
	})
	h.update(tea.WindowSizeMsg{Width: 100, Height: 24})
	t.Cleanup(h.m.closeScreens)
	return &teamHarness{cmdHarness: h, conv: tc}
}

// changed delivers an event that changes the team, and the read it asks
// for.
func (h *teamHarness) changed(e cadre.Event) {
	h.t.Helper()
	if e.Time.IsZero() {
		e.Time = h.now
	}
	h.do(h.update(EventMsg{e}))
}

func teamTaskEvent(id, status string) cadre.Event {
	return cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTeamTask, TeamTask: &cadre.TeamTaskChange{
		Team: "default", By: "alice", Change: "updated", Task: cadre.TeamTaskRef{ID: id, Status: status},
	}}
}

// TestTeamStatusLineFollowsTheTeam: no team, no word of one; once the
// lead has teammates the status line sums them up, and every change of
// the task list reads the team again.
func TestTeamStatusLineFollowsTheTeam(t *testing.T) {
	h := newTeamHarness(t, &fakeRuntime{})
	h.changed(cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeInit, Init: &cadre.InitInfo{Model: "claude-sonnet-5-5"}})
	if s := h.m.Screen(); strings.Contains(s, "team") {
		t.Fatalf("the status line speaks of a team before there is one:\n%s", s)
	}
	h.conv.set(team)
	h.changed(taskStarted("c1", run1.ID, "general-purpose", "alice joins", 1, true))
	if s := h.m.Screen(); !strings.Contains(s, "team: 1 working, 1 idle · 1/3 tasks done") {
		t.Fatalf("the status line lacks the team:\n%s", s)
	}
	done := team
	done.Tasks = slices.Clone(team.Tasks)
	done.Tasks[0].Status = "completed"
	done.Members = []cadre.Teammate{bob, bob}
	done.Members[0].Name = "alice"
	h.conv.set(done)
	h.changed(teamTaskEvent("1", "completed"))
	if s := h.m.Screen(); !strings.Contains(s, "team: 2 idle · 2/3 tasks done") {
		t.Fatalf("the status line did not follow the task list:\n%s", s)
	}
	// A message of a teammate changes nothing of the roster: no read.
	reads := h.conv.reads
	h.changed(assistant("c1", 10))
	if h.conv.reads != reads {
		t.Errorf("a teammate's message read the team again")
	}
}

// TestTeamReadsOneAtATime: events while a read is out ask for one more
// read, made when it is back, not one each.
func TestTeamReadsOneAtATime(t *testing.T) {
	h := newTeamHarness(t, &fakeRuntime{})
	h.conv.set(team)
	read := h.update(EventMsg{teamTaskEvent("1", "in_progress")})
	if read == nil {
		t.Fatal("a change of the task list did not read the team")
	}
	for range 3 {
		h.update(EventMsg{teamTaskEvent("1", "in_progress")})
	}
	msg := read()
	again := h.m.teamLoaded(msg.(teamview.TeamMsg))
	if again == nil {
		t.Fatal("the changes during the read did not ask for another")
	}
	h.m.teamLoaded(again().(teamview.TeamMsg))
	if h.conv.reads != 2 {
		t.Errorf("%d reads for 4 changes during one, want 2", h.conv.reads)
	}
}

// TestTeamScreen: /team shows the roster and the board; Enter opens the
// selected teammate's transcript; s sends it a message; the screen
// follows the team as it changes.
func TestTeamScreen(t *testing.T) {
	rt := treeFixture()
	h := newTeamHarness(t, rt)
	h.conv.set(team)
	h.do(h.enter("/team"))
	if len(h.m.screens) != 1 {
		t.Fatalf("/team pushed %d screens", len(h.m.screens))
	}
	h.golden("team")

	// Down to bob, and a message to him.
	h.press(tea.KeyDown, 0)
	h.press('s', 0)
	h.typeText("run the tests again")
	h.do(h.press(tea.KeyEnter, 0))
	if got := h.steer.recorded(); len(got) != 1 || got[0] != "send bob run the tests again" {
		t.Errorf("sent %q, want the message to bob", got)
	}
	if s := h.m.Screen(); !strings.Contains(s, "Message queued for agent bob") {
		t.Errorf("the send's reply is not shown:\n%s", s)
	}

	// Live: alice finishes #1; #3 is free.
	next := team
	next.Tasks = slices.Clone(team.Tasks)
	next.Tasks[0].Status, next.Tasks[2].Waiting = "completed", []string{}
	next.Members = []cadre.Teammate{alice, bob}
	next.Members[0].State, next.Members[0].Task = "idle", ""
	h.conv.set(next)
	h.changed(teamTaskEvent("1", "completed"))
	s := h.m.Screen()
	for _, want := range []string{"Completed (2)", "Pending (1)", "○ #3 integrate both", "2 teammates (2 idle)"} {
		if !strings.Contains(s, want) {
			t.Errorf("after #1 completed the screen lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "waits on") || strings.Contains(s, "In progress") {
		t.Errorf("the board still shows #3 blocked or #1 in progress:\n%s", s)
	}

	// Up to alice, Enter: her transcript, in the session tree.
	h.press(tea.KeyUp, 0)
	h.do(h.press(tea.KeyEnter, 0))
	if h.tree().ID() != alice.ID {
		t.Fatalf("Enter opened %s, want alice's session %s", h.tree().ID(), alice.ID)
	}
	h.load(3)
	if s := h.m.Screen(); !strings.Contains(s, "Find the flaky test in ./cache.") {
		t.Errorf("alice's transcript is not shown:\n%s", s)
	}
	// Esc goes back to the team, Esc again to the conversation.
	h.do(h.press(tea.KeyEscape, 0))
	if _, ok := h.m.screens[len(h.m.screens)-1].(*teamview.Screen); !ok {
		t.Fatalf("Esc from the transcript went to %T, not the team", h.m.screens[len(h.m.screens)-1])
	}
	h.do(h.press(tea.KeyEscape, 0))
	if len(h.m.screens) != 0 {
		t.Fatalf("%d screens left after Esc", len(h.m.screens))
	}
}

// TestMessageATeammate: "@name text" with a teammate's name sends the
// text to it, not to the main agent and not as a new run of an agent;
// "@" completes teammates' names.
func TestMessageATeammate(t *testing.T) {
	h := newTeamHarness(t, &fakeRuntime{})
	h.conv.set(team)
	h.changed(teamTaskEvent("1", "in_progress"))

	h.typeText("@al")
	if got := h.m.completion; len(got) == 0 || got[0] != "alice" {
		t.Errorf("@al offers %q, want alice first", got)
	}
	h.press(tea.KeyTab, 0)
	h.typeText("the parser needs a test")
	h.do(h.press(tea.KeyEnter, 0))
	if got := h.steer.recorded(); len(got) != 1 || got[0] != "send alice the parser needs a test" {
		t.Errorf("sent %q, want the message to alice", got)
	}
	if len(h.conv.sent) != 0 || len(h.conv.agents) != 0 || h.m.busy {
		t.Errorf("the message went to the main agent (%q) or ran an agent (%q), busy %v", h.conv.sent, h.conv.agents, h.m.busy)
	}
	s := h.m.Screen()
	for _, want := range []string{"→ @alice the parser needs a test", "Message queued for agent alice"} {
		if !strings.Contains(s, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, s)
		}
	}

	h.do(h.enter("@bob"))
	if s := h.m.Screen(); !strings.Contains(s, "@bob needs a message") {
		t.Errorf("@bob alone:\n%s", s)
	}
	// An agent's name that is no teammate still runs the agent.
	h.do(h.enter("@reviewer look at it"))
	if len(h.conv.agents) != 1 || h.conv.agents[0] != [2]string{"reviewer", "look at it"} {
		t.Errorf("@reviewer ran %q", h.conv.agents)
	}
}

// The shortcut sheet and /help name the team's keys.
func TestTeamKeysInHelp(t *testing.T) {
	h := newTeamHarness(t, &fakeRuntime{})
	h.typeText("?")
	if s := h.m.Screen(); !strings.Contains(s, "/team") || !strings.Contains(s, "@teammate text") {
		t.Errorf("the shortcut sheet lacks the team's keys:\n%s", s)
	}
	h.press(tea.KeyEscape, 0)
	h.do(h.enter("/help"))
	if s := h.m.Screen(); !strings.Contains(s, "/team") {
		t.Errorf("/help lacks /team:\n%s", s)
	}
}
