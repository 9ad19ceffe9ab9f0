package tui

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/tui/sessiontree"
	"github.com/cadre-dev/cadre/llm"
)

// steerConv is a conversation that can also be steered: it records what
// the commands ask of it and answers from its fields.
type steerConv struct {
	*fakeConv
	id   string
	runs []cadre.SubagentRun

	mu       sync.Mutex
	calls    []string // "stop #1", "log #2 5 true", …
	models   []string
	compacts int
	modelErr error
}

func (s *steerConv) record(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
}

func (s *steerConv) recorded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func (s *steerConv) SessionID() string { return s.id }

func (s *steerConv) Subagents(context.Context) ([]cadre.SubagentRun, error) { return s.runs, nil }

func (s *steerConv) FindSubagent(_ context.Context, target string) (cadre.SubagentRun, error) {
	for _, r := range s.runs {
		if target == fmt.Sprintf("#%d", r.Index) || target == r.ID {
			return r, nil
		}
	}
	return cadre.SubagentRun{}, fmt.Errorf("no subagent %q in this conversation", target)
}

func (s *steerConv) StopSubagent(_ context.Context, target string) ([]string, error) {
	s.record("stop %s", target)
	r, err := s.FindSubagent(context.Background(), target)
	if err != nil {
		return nil, err
	}
	return []string{r.ID, "child-of-" + r.ID}, nil
}

func (s *steerConv) Abort(context.Context) ([]string, error) {
	s.record("abort")
	return []string{"a", "b"}, nil
}

func (s *steerConv) SendSubagent(_ context.Context, target, text string) (string, error) {
	s.record("send %s %s", target, text)
	return "Message queued for agent " + target + "; it will read it after its current step.", nil
}

func (s *steerConv) SubagentInfo(_ context.Context, target string) (cadre.SubagentDetails, error) {
	r, err := s.FindSubagent(context.Background(), target)
	if err != nil {
		return cadre.SubagentDetails{}, err
	}
	return cadre.SubagentDetails{SubagentRun: r, Prompt: "Find the flaky test.", SessionID: r.ID, TranscriptPath: "/state/sessions/" + r.ID + ".jsonl", Cleanup: "keep", ArchiveAfterMinutes: 60}, nil
}

func (s *steerConv) SubagentLog(_ context.Context, target string, limit int, tools bool) (cadre.SubagentRun, []cadre.LogMessage, error) {
	s.record("log %s %d %v", target, limit, tools)
	r, err := s.FindSubagent(context.Background(), target)
	if err != nil {
		return r, nil, err
	}
	return r, []cadre.LogMessage{{Role: "user", Text: "Find the flaky test."}, {Role: "assistant", Text: "→ Grep {\"pattern\":\"t.Parallel\"}\nFound it in cache_test.go."}}, nil
}

func (s *steerConv) Compact(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.compacts++
	return nil
}

func (s *steerConv) SetModel(name string) error {
	if s.modelErr != nil {
		return s.modelErr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append(s.models, name)
	return nil
}

// Model resolves as the runtime does: an alias to a full name, "default"
// to the opening model.
func (s *steerConv) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch last := s.models[len(s.models)-1]; last {
	case "default":
		return "claude-sonnet-5-5"
	case "opus":
		return "claude-opus-5-5"
	default:
		return last
	}
}

// fakeRuntime answers the commands' runtime calls from its fields.
type fakeRuntime struct {
	agents   []cadre.AgentEntry
	tasks    []cadre.Task
	sessions []cadre.Session
	trees    map[string]cadre.SessionTree
	// transcripts are what WatchSession yields first; live, for the
	// session liveID, what it yields next, as it comes.
	transcripts map[string][]cadre.Event
	liveID      string
	live        chan cadre.Event

	mu        sync.Mutex
	created   []cadre.NewAgent
	createErr error
	stopped   []string
	reads     int // TaskOutput calls
}

func (f *fakeRuntime) Agents() []cadre.AgentEntry { return f.agents }

func (f *fakeRuntime) Agent(name string) (cadre.Agent, bool) {
	for _, e := range f.agents {
		if e.Active && e.Agent.Name == name {
			return e.Agent, true
		}
	}
	return cadre.Agent{}, false
}

func (f *fakeRuntime) CreateAgent(_ context.Context, a cadre.NewAgent) (cadre.AgentEntry, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, a)
	if f.createErr != nil {
		return cadre.AgentEntry{}, f.createErr
	}
	return cadre.AgentEntry{Agent: cadre.Agent{Name: a.Name, Description: a.Description}, Source: cadre.AgentSourceProject, Path: "/work/project/.cadre/agents/" + a.Name + ".md", Active: true}, nil
}

func (f *fakeRuntime) Tasks(context.Context, string, int) ([]cadre.Task, error) { return f.tasks, nil }

func (f *fakeRuntime) TaskOutput(_ context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	return fmt.Sprintf("[Grep] t.Parallel\nline 2 of %s\n\n[completed]\nFound it (read %d).", id, f.reads), nil
}

func (f *fakeRuntime) StopTask(_ context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = append(f.stopped, id)
	return "Stopped task " + id + ".", nil
}

func (f *fakeRuntime) Sessions(context.Context, string, int) ([]cadre.Session, error) {
	return f.sessions, nil
}

func (f *fakeRuntime) SessionTree(_ context.Context, id string) (cadre.SessionTree, error) {
	t, ok := f.trees[id]
	if !ok {
		return cadre.SessionTree{}, fmt.Errorf("session %s: %w", id, cadre.ErrNotFound)
	}
	return t, nil
}

func (f *fakeRuntime) WatchSession(ctx context.Context, id string) iter.Seq2[cadre.Event, error] {
	return func(yield func(cadre.Event, error) bool) {
		for _, ev := range f.transcripts[id] {
			if !yield(ev, nil) {
				return
			}
		}
		var live chan cadre.Event
		if id == f.liveID {
			live = f.live
		}
		for {
			select {
			case ev := <-live:
				if !yield(ev, nil) {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
}

func (f *fakeRuntime) Cwd() string { return "/work/project" }

// cmdHarness is the model over a steerable conversation and a runtime.
type cmdHarness struct {
	*harness
	steer *steerConv
	rt    *fakeRuntime
	// reopened is what /clear and /resume asked to open.
	reopened []cadre.OpenRequest
}

func newCmdHarness(t *testing.T, rt *fakeRuntime, runs ...cadre.SubagentRun) *cmdHarness {
	h := &cmdHarness{harness: &harness{t: t, conv: &fakeConv{}, now: t0}, rt: rt}
	h.steer = &steerConv{fakeConv: h.conv, id: "0197aaaa-0000-7000-8000-0000000main0", runs: runs}
	h.m = New(t.Context(), Config{
		Conversation: h.steer, Approvals: cadre.NewApprovals(), Model: "sonnet", Mode: cadre.PermissionDefault,
		Agents: []string{"reviewer"}, Now: func() time.Time { return h.now }, Runtime: rt,
		Reopen: func(r cadre.OpenRequest) { h.reopened = append(h.reopened, r) },
	})
	h.update(tea.WindowSizeMsg{Width: 100, Height: 24})
	h.event(cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeInit, Init: &cadre.InitInfo{Model: "claude-sonnet-5-5", PermissionMode: cadre.PermissionDefault, SlashCommands: []string{"review"}}})
	t.Cleanup(h.m.closeScreens)
	return h
}

// enter types line and presses Enter; it returns the command the model
// gave back.
func (h *cmdHarness) enter(line string) tea.Cmd {
	h.typeText(line)
	h.m.completion = nil // Enter submits, whatever was offered
	return h.press(tea.KeyEnter, 0)
}

// do runs cmd and feeds its messages to the model, as the program would,
// following sequences and batches; a tick is not followed (nothing here
// waits on time).
func (h *cmdHarness) do(cmd tea.Cmd) {
	h.t.Helper()
	if cmd == nil {
		return
	}
	msg := cmd()
	if msg == nil {
		return
	}
	if _, ok := msg.(tickMsg); ok {
		return
	}
	v := reflect.ValueOf(msg)
	if v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		for i := range v.Len() {
			h.do(v.Index(i).Interface().(tea.Cmd))
		}
		return
	}
	if _, ok := msg.(sessiontree.StartMsg); ok {
		// Starting the watch returns commands that wait on it: the test
		// drives them itself (tree()).
		h.update(msg)
		return
	}
	h.do(h.update(msg))
}

var (
	run1 = cadre.SubagentRun{Index: 1, ID: "0197aaaa-0000-7000-8000-00000000a001", Key: "agent:explorer:subagent:0197aaaa-0000-7000-8000-00000000a001", Agent: "explorer", Description: "Find the flaky test", Depth: 1, Status: cadre.TaskRunning, Started: t0.Add(-95 * time.Second), Tokens: 12300, CurrentTool: "Grep", Background: true}
	run2 = cadre.SubagentRun{Index: 2, ID: "0197aaaa-0000-7000-8000-00000000b002", Key: "agent:reviewer:subagent:0197aaaa-0000-7000-8000-00000000b002", Agent: "reviewer", Name: "rev", Description: "Review the diff", Depth: 1, Status: cadre.TaskCompleted, Started: t0.Add(-60 * time.Second), Ended: t0.Add(-20 * time.Second), Tokens: 4100}
	run3 = cadre.SubagentRun{Index: 3, ID: "0197aaaa-0000-7000-8000-00000000c003", Agent: "explorer", Description: "Read the cache code", Depth: 2, Status: cadre.TaskKilled, Started: t0.Add(-50 * time.Second), Ended: t0.Add(-10 * time.Second), Tokens: 800}
)

func TestSubagentsCommands(t *testing.T) {
	h := newCmdHarness(t, &fakeRuntime{}, run1, run2, run3)
	h.do(h.enter("/subagents list"))
	h.golden("subagents_list")

	for _, tc := range []struct {
		line, call, shown string
	}{
		{"/subagents stop #1", "stop #1", "Stopped 2 subagents (descendants included): 0000a001, 0000a001"},
		{"/subagents stop all", "stop all", ""},
		{"/subagents log #2 5 tools", "log #2 5 true", "Found it in cache_test.go."},
		{"/subagents log #2", "log #2 0 false", "Log of #2 reviewer Review the diff (completed)"},
		{"/subagents send #1 also check the retry", "send #1 also check the retry", "Message queued for agent #1"},
		{"/stop", "abort", "Stopped the turn and 2 subagents."},
	} {
		h.steer.calls = nil
		h.do(h.enter(tc.line))
		if got := h.steer.recorded(); len(got) != 1 || got[0] != tc.call {
			t.Errorf("%s: calls %q, want %q", tc.line, got, tc.call)
		}
		if !strings.Contains(h.m.transcript(), tc.shown) {
			t.Errorf("%s: the transcript lacks %q:\n%s", tc.line, tc.shown, h.m.Screen())
		}
	}
	h.do(h.enter("/subagents info #2"))
	for _, want := range []string{"Subagent     #2 reviewer", "Session      agent:reviewer:subagent:", "Transcript   /state/sessions/", "Cleanup      keep (archived 60 min after it ends)", "Runtime      40s"} {
		if !strings.Contains(h.m.transcript(), want) {
			t.Errorf("/subagents info lacks %q:\n%s", want, h.m.transcript())
		}
	}
	for _, tc := range []struct{ line, want string }{
		{"/subagents stop", "needs a target"},
		{"/subagents log", "needs a target"},
		{"/subagents log #1 many", `"many" is not a message count`},
		{"/subagents log #1 5 6", `unexpected "6"`},
		{"/subagents send #1", "needs a target and a message"},
		{"/subagents info #9", `no subagent "#9"`},
		{"/subagents dance", `unknown /subagents action "dance"`},
	} {
		h.do(h.enter(tc.line))
		if last := h.m.items[len(h.m.items)-1]; last.kind != kindError || !strings.Contains(last.text, tc.want) {
			t.Errorf("%s: last item %+v, want an error with %q", tc.line, last, tc.want)
		}
	}
}

func TestAgentsCommandListsShowsAndCreates(t *testing.T) {
	rt := &fakeRuntime{agents: []cadre.AgentEntry{
		{Agent: cadre.Agent{Name: "general-purpose", Description: "General-purpose agent for research."}, Source: cadre.AgentSourceBuiltin, Active: true},
		{Agent: cadre.Agent{Name: "reviewer", Description: "Reviews code.", Tools: []string{"Read", "Grep"}, Model: "haiku", Prompt: "You review code."}, Source: cadre.AgentSourceProject, Path: "/work/project/.claude/agents/reviewer.md", Line: 1, Active: true},
		{Agent: cadre.Agent{Name: "reviewer", Description: "Old reviewer."}, Source: cadre.AgentSourceUser, Path: "/home/u/.cadre/agents/reviewer.md", ShadowedBy: "/work/project/.claude/agents/reviewer.md"},
		{Agent: cadre.Agent{Name: "broken"}, Source: cadre.AgentSourceProject, Path: "/work/project/.claude/agents/broken.md", Err: errors.New("/work/project/.claude/agents/broken.md:2: description is required")},
	}}
	h := newCmdHarness(t, rt)
	h.do(h.enter("/agents"))
	h.golden("agents_list")

	h.do(h.enter("/agents show reviewer"))
	for _, want := range []string{"Agent reviewer · project /work/project/.claude/agents/reviewer.md:1", "tools            Read, Grep", "model            haiku", "You review code."} {
		if !strings.Contains(h.m.transcript(), want) {
			t.Errorf("/agents show lacks %q:\n%s", want, h.m.transcript())
		}
	}
	h.do(h.enter("/agents show nobody"))
	if last := h.m.items[len(h.m.items)-1]; last.kind != kindError || !strings.Contains(last.text, `no agent named "nobody" (these exist: general-purpose, reviewer)`) {
		t.Errorf("unknown agent: %+v", last)
	}

	// The short form: refused first (the runtime's reason stays on the
	// form), then written.
	rt.createErr = errors.New("create agent: agent tester: /work/project/.cadre/agents/tester.md exists already; edit it or pick another name")
	h.do(h.enter("/agents create tester"))
	if len(h.m.screens) != 1 {
		t.Fatalf("/agents create pushed %d screens", len(h.m.screens))
	}
	h.press(tea.KeyTab, 0)
	h.typeText("Writes tests: table-driven")
	h.press(tea.KeyTab, 0)
	h.typeText("Read, Edit")
	h.press(tea.KeyTab, 0)
	h.typeText("sonnet")
	h.press(tea.KeyTab, 0)
	h.typeText("You write tests.")
	h.do(h.press(tea.KeyEnter, 0))
	h.golden("agent_form_refused")
	rt.createErr = nil
	h.do(h.press(tea.KeyEnter, 0))
	if len(h.m.screens) != 0 {
		t.Fatal("the form stayed open after the agent was created")
	}
	want := cadre.NewAgent{Name: "tester", Description: "Writes tests: table-driven", Tools: []string{"Read", "Edit"}, Model: "sonnet", Prompt: "You write tests."}
	if len(rt.created) != 2 || !reflect.DeepEqual(rt.created[1], want) {
		t.Fatalf("created %+v, want twice %+v", rt.created, want)
	}
	if !strings.Contains(h.m.transcript(), "Created agent tester in .cadre/agents/tester.md") {
		t.Errorf("no confirmation:\n%s", h.m.transcript())
	}
	if !strings.Contains(strings.Join(h.m.cfg.Agents, ","), "tester") {
		t.Errorf("@ does not offer the new agent: %v", h.m.cfg.Agents)
	}
	// Esc leaves the form without writing.
	h.do(h.enter("/agents create"))
	h.do(h.press(tea.KeyEscape, 0))
	if len(h.m.screens) != 0 || len(rt.created) != 2 {
		t.Errorf("Esc: %d screens, %d creations", len(h.m.screens), len(rt.created))
	}
}

func TestTasksCommand(t *testing.T) {
	rt := &fakeRuntime{tasks: []cadre.Task{ // newest first, as the store lists them
		{ID: "0197bbbb-0000-7000-8000-0000000000c3", Kind: cadre.TaskLocalBash, Agent: "shell", Description: "watch the tests", Status: cadre.TaskRunning, Created: t0.Add(-30 * time.Second), Started: t0.Add(-30 * time.Second)},
		{ID: "0197bbbb-0000-7000-8000-0000000000b2", Agent: "reviewer", Description: "Review the diff", Status: cadre.TaskCompleted, Created: t0.Add(-60 * time.Second), Started: t0.Add(-60 * time.Second), Finished: t0.Add(-5 * time.Second), CostUSD: llm.USD(0.0123)},
		{ID: "0197bbbb-0000-7000-8000-0000000000a1", Agent: "explorer", Description: "Find the flaky test", Status: cadre.TaskRunning, Progress: "grepping for t.Parallel", Created: t0.Add(-125 * time.Second), Started: t0.Add(-125 * time.Second)},
	}}
	// The conversation's subagents: a foreground run first, then the two
	// background ones, numbered by the runtime.
	runs := []cadre.SubagentRun{
		{Index: 1, ID: "0197bbbb-0000-7000-8000-0000000000f0", Agent: "general-purpose", Description: "Look around", Status: cadre.TaskCompleted, Depth: 1, Started: t0.Add(-130 * time.Second), Ended: t0.Add(-126 * time.Second)},
		{Index: 2, ID: rt.tasks[2].ID, Agent: "explorer", Description: "Find the flaky test", Status: cadre.TaskRunning, Depth: 1, Background: true, Started: t0.Add(-125 * time.Second)},
		{Index: 3, ID: rt.tasks[1].ID, Agent: "reviewer", Description: "Review the diff", Status: cadre.TaskCompleted, Depth: 1, Background: true, Started: t0.Add(-60 * time.Second), Ended: t0.Add(-5 * time.Second)},
	}
	h := newCmdHarness(t, rt, runs...)
	h.do(h.enter("/tasks"))
	h.golden("tasks")
	// One numbering: each task's # is its run's in /subagents.
	tasks := h.m.items[len(h.m.items)-1].text
	h.do(h.enter("/subagents list"))
	subagents := h.m.items[len(h.m.items)-1].text
	if !slices.ContainsFunc(strings.Split(tasks, "\n"), func(row string) bool {
		return strings.HasPrefix(row, "s1 ") && strings.Contains(row, "watch the tests")
	}) {
		t.Errorf("/tasks does not number the shell command s1:\n%s", tasks)
	}
	for _, want := range []struct{ n, desc string }{{"#2", "Find the flaky test"}, {"#3", "Review the diff"}} {
		for name, table := range map[string]string{"/tasks": tasks, "/subagents": subagents} {
			if !slices.ContainsFunc(strings.Split(table, "\n"), func(row string) bool {
				return strings.HasPrefix(row, want.n+" ") && strings.Contains(row, want.desc)
			}) {
				t.Errorf("%s does not number %q %s:\n%s", name, want.desc, want.n, table)
			}
		}
	}
	h.do(h.enter("/tasks stop #2"))
	if len(rt.stopped) != 1 || rt.stopped[0] != rt.tasks[2].ID {
		t.Errorf("/tasks stop #2 stopped %v, want subagent #2's task %s", rt.stopped, rt.tasks[2].ID)
	}
	h.do(h.enter("/tasks stop s1"))
	if len(rt.stopped) != 2 || rt.stopped[1] != rt.tasks[0].ID {
		t.Errorf("/tasks stop s1 stopped %v, want the shell command %s", rt.stopped, rt.tasks[0].ID)
	}
	h.do(h.enter("/tasks output 000000b2"))
	if len(h.m.screens) != 1 {
		t.Fatalf("/tasks output pushed %d screens", len(h.m.screens))
	}
	screen := h.m.Screen()
	for _, want := range []string{"Task 000000b2 · reviewer · completed — Review the diff", "line 2 of 0197bbbb-0000-7000-8000-0000000000b2", "Found it (read 1).", "r reload · esc back"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the output screen lacks %q:\n%s", want, screen)
		}
	}
	h.do(h.press('r', 0))
	if screen := h.m.Screen(); !strings.Contains(screen, "Found it (read 2).") {
		t.Errorf("r did not read the output again:\n%s", screen)
	}
	h.do(h.press(tea.KeyEscape, 0))
	if len(h.m.screens) != 0 {
		t.Error("Esc did not close the output")
	}
	for _, tc := range []struct{ line, want string }{
		{"/tasks output", "needs a task"},
		{"/tasks stop #4", "no subagent #4"},
		{"/tasks stop #1", "subagent #1 ran in the foreground"},
		{"/tasks stop 0197bbbb", "matches 3 task ids"},
		{"/tasks stop s2", "no task s2"},
		{"/tasks list", `unknown /tasks action "list"`},
	} {
		h.do(h.enter(tc.line))
		if last := h.m.items[len(h.m.items)-1]; last.kind != kindError || !strings.Contains(last.text, tc.want) {
			t.Errorf("%s: last item %+v, want an error with %q", tc.line, last, tc.want)
		}
	}
}

func TestModelCompactClearAndUnknownCommands(t *testing.T) {
	h := newCmdHarness(t, &fakeRuntime{})
	h.do(h.enter("/model opus"))
	if len(h.steer.models) != 1 || h.steer.models[0] != "opus" || !strings.Contains(h.m.status(), "opus") {
		t.Errorf("/model opus: models %v, status %q", h.steer.models, h.m.status())
	}
	if !strings.Contains(h.m.status(), "claude-opus-5-5") {
		t.Errorf("the status line names %q, want the resolved model", h.m.status())
	}
	h.do(h.enter("/model default"))
	if !strings.Contains(h.m.status(), "claude-sonnet-5-5") || strings.Contains(h.m.status(), "opus") {
		t.Errorf("/model default: the status line names %q, want the opening model", h.m.status())
	}
	h.steer.modelErr = errors.New(`set model: unknown model alias "gpt-9"`)
	h.do(h.enter("/model gpt-9"))
	if last := h.m.items[len(h.m.items)-1]; last.kind != kindError || !strings.Contains(last.text, "gpt-9") {
		t.Errorf("a bad model: %+v", last)
	}
	h.do(h.enter("/compact"))
	if h.steer.compacts != 1 || !h.m.busy {
		t.Errorf("/compact: %d compactions, busy %v", h.steer.compacts, h.m.busy)
	}
	h.do(h.enter("/compact"))
	if !strings.Contains(h.m.Screen(), "⏳ queued: /compact") {
		t.Errorf("a second /compact while busy is not shown queued:\n%s", h.m.Screen())
	}
	h.do(h.enter("/frobnicate"))
	if last := h.m.items[len(h.m.items)-1]; last.kind != kindError || !strings.Contains(last.text, "unknown command /frobnicate — these exist: /agents, /subagents, /stop, /tasks") || !strings.Contains(last.text, "/review") {
		t.Errorf("unknown command: %+v", last)
	}
	h.typeText("/review the diff")
	h.m.completion = nil
	h.press(tea.KeyEnter, 0)
	if got := h.conv.sent; len(got) != 1 || got[0] != "/review the diff" {
		t.Errorf("the project's command went as %q, want it sent to the conversation", got)
	}
	cmd := h.enter("/clear")
	if len(h.reopened) != 1 || h.reopened[0].Resume != "" || cmd == nil {
		t.Fatalf("/clear: reopened %+v", h.reopened)
	}
	if _, quit := cmd().(tea.QuitMsg); !quit {
		t.Error("/clear does not end the program")
	}
}

func TestCommandCompletion(t *testing.T) {
	h := newCmdHarness(t, &fakeRuntime{agents: []cadre.AgentEntry{{Agent: cadre.Agent{Name: "reviewer"}, Active: true}}}, run1, run2)
	for _, tc := range []struct {
		typed string
		want  []string
	}{
		{"/su", []string{"/subagents"}},
		{"/re", []string{"/resume", "/review"}},
		{"/subagents ", []string{"/subagents list", "/subagents stop", "/subagents log", "/subagents info", "/subagents send"}},
		{"/subagents st", []string{"/subagents stop"}},
		{"/subagents stop ", []string{"/subagents stop #1", "/subagents stop #2", "/subagents stop all"}},
		{"/agents show r", []string{"/agents show reviewer"}},
		{"/help", nil}, // typed whole: Enter runs it
		{"/model x", nil},
	} {
		h.m.input.Reset()
		h.typeText(tc.typed)
		if !reflect.DeepEqual(h.m.completion, tc.want) {
			t.Errorf("%q completes to %q, want %q", tc.typed, h.m.completion, tc.want)
		}
	}
	h.m.input.Reset()
	h.typeText("/subagents st")
	h.press(tea.KeyTab, 0)
	if got := h.m.input.Value(); got != "/subagents stop " {
		t.Errorf("Tab made %q", got)
	}
}

func TestResumeScreen(t *testing.T) {
	at := t0.Add(-time.Hour)
	rt := &fakeRuntime{sessions: []cadre.Session{
		{ID: "0197cccc-0000-7000-8000-0000000000m2", Agent: "main", Title: "Fix the cache", Status: cadre.SessionIdle, Updated: at, NumTurns: 4},
		{ID: "0197cccc-0000-7000-8000-0000000000c1", ParentID: "0197cccc-0000-7000-8000-0000000000m2", Agent: "explorer", Status: cadre.SessionCompleted, Updated: at, NumTurns: 2},
		{ID: "0197cccc-0000-7000-8000-0000000000m1", Agent: "main", Title: "Write the docs", Status: cadre.SessionCompleted, Updated: at, NumTurns: 9},
	}, trees: map[string]cadre.SessionTree{}}
	rt.trees["0197cccc-0000-7000-8000-0000000000c1"] = cadre.SessionTree{Session: cadre.SessionNode{Session: rt.sessions[1]}}
	h := newCmdHarness(t, rt)
	h.do(h.enter("/resume"))
	if len(h.m.screens) != 1 {
		t.Fatalf("/resume pushed %d screens", len(h.m.screens))
	}
	screen := h.m.Screen()
	for _, want := range []string{"› 000000m2", "  └ 000000c1", "explorer", "000000m1", "Write the docs"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the resume screen lacks %q:\n%s", want, screen)
		}
	}
	// A subagent's session opens in the tree; a main session reopens.
	h.press(tea.KeyDown, 0)
	h.do(h.press(tea.KeyEnter, 0))
	if _, ok := h.m.screens[len(h.m.screens)-1].(*sessiontree.Screen); !ok || len(h.reopened) != 0 {
		t.Fatalf("Enter on a subagent's session: screens %T, reopened %v", h.m.screens, h.reopened)
	}
	h.do(h.press(tea.KeyEscape, 0))
	h.press(tea.KeyDown, 0)
	cmd := h.press(tea.KeyEnter, 0)
	if len(h.reopened) != 1 || h.reopened[0].Resume != "0197cccc-0000-7000-8000-0000000000m1" {
		t.Fatalf("reopened %+v", h.reopened)
	}
	if _, quit := cmd().(tea.QuitMsg); !quit {
		t.Error("reopening does not end the program")
	}
}

// tree is the tree screen on top.
func (h *cmdHarness) tree() *sessiontree.Screen {
	h.t.Helper()
	ts, ok := h.m.screens[len(h.m.screens)-1].(*sessiontree.Screen)
	if !ok {
		h.t.Fatalf("the screen on top is %T, not the tree", h.m.screens[len(h.m.screens)-1])
	}
	return ts
}

// load feeds the tree screen its session's tree and n transcript events.
func (h *cmdHarness) load(n int) {
	h.t.Helper()
	ts := h.tree()
	h.update(ts.Load()())
	for range n {
		msg := make(chan tea.Msg, 1)
		go func() { msg <- ts.Next()() }()
		select {
		case m := <-msg:
			h.update(m)
		case <-time.After(time.Minute):
			h.t.Fatal("no transcript event came")
		}
	}
}

func treeFixture() *fakeRuntime {
	session := func(id, parent, agent string, status cadre.SessionStatus, turns int) cadre.Session {
		return cadre.Session{ID: id, ParentID: parent, Agent: agent, Status: status, NumTurns: turns}
	}
	main := cadre.SessionNode{Session: session("0197aaaa-0000-7000-8000-0000000main0", "", "main", cadre.SessionRunning, 3)}
	a := cadre.SessionNode{Session: session(run1.ID, "0197aaaa-0000-7000-8000-0000000main0", "explorer", cadre.SessionRunning, 2), Description: "Find the flaky test"}
	b := cadre.SessionNode{Session: session(run2.ID, "0197aaaa-0000-7000-8000-0000000main0", "reviewer", cadre.SessionCompleted, 1), Description: "Review the diff"}
	c := cadre.SessionNode{Session: session(run3.ID, run1.ID, "explorer", cadre.SessionKilled, 1), Description: "Read the cache code"}
	rt := &fakeRuntime{
		trees: map[string]cadre.SessionTree{
			main.ID: {Session: main, Children: []cadre.SessionNode{a, b}, Siblings: []cadre.SessionNode{main}},
			a.ID:    {Session: a, Parent: &main, Children: []cadre.SessionNode{c}, Siblings: []cadre.SessionNode{a, b}, Position: 0},
			b.ID:    {Session: b, Parent: &main, Siblings: []cadre.SessionNode{a, b}, Position: 1},
			c.ID:    {Session: c, Parent: &a, Siblings: []cadre.SessionNode{c}},
		},
		transcripts: map[string][]cadre.Event{
			a.ID: {
				{Type: cadre.EventUser, AgentID: a.ID, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("Find the flaky test in ./cache.")}}},
				{Type: cadre.EventAssistant, AgentID: a.ID, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Searching the tests."), toolUse("g1", "Grep", map[string]any{"pattern": "t.Parallel"})}}},
				{Type: cadre.EventUser, AgentID: a.ID, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: "g1", Content: []llm.Block{llm.Text("cache_test.go:12\ncache_test.go:40")}}}}},
			},
			b.ID: {{Type: cadre.EventAssistant, AgentID: b.ID, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("The diff looks good.")}}}},
		},
		liveID: a.ID,
		live:   make(chan cadre.Event, 1),
	}
	return rt
}

func TestTreeScreen(t *testing.T) {
	rt := treeFixture()
	h := newCmdHarness(t, rt, run1, run2, run3)
	h.do(h.enter("/tree #1"))
	h.load(3)
	h.golden("tree")

	// Live: the running session's next message shows as it comes.
	rt.live <- cadre.Event{Type: cadre.EventAssistant, AgentID: run1.ID, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("LIVE: found a race in cache_test.go.")}}}
	h.load(1)
	if !strings.Contains(h.m.Screen(), "LIVE: found a race") {
		t.Fatalf("the live message is not shown:\n%s", h.m.Screen())
	}

	// Send it a message.
	h.press('s', 0)
	h.typeText("check the retry too")
	h.do(h.press(tea.KeyEnter, 0))
	if got := h.steer.recorded(); len(got) != 1 || got[0] != "send "+run1.ID+" check the retry too" {
		t.Errorf("sent %q", got)
	}
	if !strings.Contains(h.m.Screen(), "Message queued for agent") {
		t.Errorf("the send's reply is not shown:\n%s", h.m.Screen())
	}

	// Children, siblings, parent.
	for _, tc := range []struct {
		key  rune
		want string
		n    int
	}{
		{tea.KeyEnter, "explorer · Read the cache code · killed", 0},
		{'p', "explorer · Find the flaky test · running", 3},
		{tea.KeyRight, "reviewer · Review the diff · completed", 1},
		{tea.KeyRight, "explorer · Find the flaky test · running", 3},
		{tea.KeyLeft, "sibling 2 of 2", 1},
		{'p', "main session", 0},
	} {
		h.press(tc.key, 0) // its commands wait on the watch: load drives them
		h.load(tc.n)
		if screen := h.m.Screen(); !strings.Contains(screen, tc.want) {
			t.Fatalf("after %q the screen lacks %q:\n%s", tc.key, tc.want, screen)
		}
	}
	h.press('s', 0)
	if !strings.Contains(h.m.Screen(), "this is the main session") {
		t.Errorf("s on the main session:\n%s", h.m.Screen())
	}
	h.do(h.press(tea.KeyEscape, 0))
	if len(h.m.screens) != 0 {
		t.Fatal("Esc did not go back to the conversation")
	}
	if !strings.Contains(h.m.Screen(), "›") {
		t.Errorf("the conversation is not back:\n%s", h.m.Screen())
	}
}

// Ctrl+T opens the tree at the newest running subagent.
func TestCtrlTOpensTheTree(t *testing.T) {
	rt := treeFixture()
	h := newCmdHarness(t, rt, run1, run2, run3)
	h.do(h.press('t', tea.ModCtrl))
	if h.tree().ID() != run1.ID {
		t.Fatalf("Ctrl+T opened %s, want the running subagent %s", h.tree().ID(), run1.ID)
	}
	h.load(3)
	if !strings.Contains(h.m.Screen(), "Find the flaky test in ./cache.") {
		t.Errorf("the transcript is not shown:\n%s", h.m.Screen())
	}
}

// TestSubagentInfoOutput: a background run's info names its output file,
// or, when the store keeps transcripts (PostgreSQL), how to read its output.
func TestSubagentInfoOutput(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"/home/u/.cadre/tasks/a1.output", "Output       /home/u/.cadre/tasks/a1.output"},
		{"", "Output       in the store: cadre tasks output a1"},
	} {
		d := cadre.SubagentDetails{OutputFile: tc.file}
		d.SessionID, d.Background = "a1", true
		if got := subagentInfo(d, time.Now()); !strings.Contains(got, tc.want) {
			t.Errorf("info with output file %q:\n%s\nwant a line %q", tc.file, got, tc.want)
		}
	}
}
