package cadre_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// deadline bounds a wait on an event of a test: generous, for -race on a
// shared machine; it only ends a test that could never pass.
const deadline = 2 * time.Minute

// convo reads a conversation's events in the background and lets a test
// wait for them.
type convo struct {
	t  *testing.T
	c  *cadre.Conversation
	mu sync.Mutex
	// evs are the events read so far; more is signalled on each.
	evs   []cadre.Event
	more  chan struct{}
	ended chan struct{}
}

func openConvo(t *testing.T, rt *cadre.Runtime, req cadre.OpenRequest) *convo {
	t.Helper()
	c, err := rt.Open(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	cv := &convo{t: t, c: c, more: make(chan struct{}, 1), ended: make(chan struct{})}
	go func() {
		defer close(cv.ended)
		for ev, err := range c.Events() {
			if err != nil {
				t.Error(err)
				return
			}
			cv.mu.Lock()
			cv.evs = append(cv.evs, ev)
			cv.mu.Unlock()
			select {
			case cv.more <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() {
		c.Stop()
		<-cv.ended
	})
	return cv
}

func (cv *convo) send(text string) {
	cv.t.Helper()
	if err := cv.c.Send(context.Background(), cadre.Message{Text: text}); err != nil {
		cv.t.Fatal(err)
	}
}

// results are the result events so far.
func (cv *convo) results() []*cadre.ResultInfo {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	var out []*cadre.ResultInfo
	for _, ev := range cv.evs {
		if ev.Type == cadre.EventResult {
			out = append(out, ev.Result)
		}
	}
	return out
}

// waitResults waits until n results have come.
func (cv *convo) waitResults(n int) []*cadre.ResultInfo {
	cv.t.Helper()
	cv.waitFor(fmt.Sprintf("%d results", n), func() bool { return len(cv.results()) >= n })
	return cv.results()
}

// waitEvent waits for an event of this type and subtype.
func (cv *convo) waitEvent(typ cadre.EventType, subtype string) {
	cv.t.Helper()
	cv.waitFor(fmt.Sprintf("a %s %s event", typ, subtype), func() bool {
		cv.mu.Lock()
		defer cv.mu.Unlock()
		return slices.ContainsFunc(cv.evs, func(ev cadre.Event) bool { return ev.Type == typ && ev.Subtype == subtype })
	})
}

// waitFor waits until done holds, checking after each event.
func (cv *convo) waitFor(what string, done func() bool) {
	cv.t.Helper()
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	for !done() {
		select {
		case <-cv.more:
		case <-cv.ended:
			if !done() {
				cv.t.Fatalf("the conversation ended before %s", what)
			}
		case <-timer.C:
			cv.t.Fatalf("no %s after %v", what, deadline)
		}
	}
}

// close closes the conversation and waits for its events to end.
func (cv *convo) close() []*cadre.ResultInfo {
	cv.t.Helper()
	if err := cv.c.Close(); err != nil {
		cv.t.Fatal(err)
	}
	<-cv.ended
	return cv.results()
}

// wait receives from ch, or fails the test at the deadline.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(deadline):
		t.Fatalf("no %s within %v", what, deadline)
		panic("unreachable")
	}
}

// echo answers every message with its text.
func echo(_ context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Reply(llm.Text("echo: " + req.Messages[len(req.Messages)-1].Text())), nil
}

func TestConversationRunsOneTurnPerMessageInOrder(t *testing.T) {
	f := newFixture(t)
	f.fn = echo
	rt := f.open(t, cadre.Options{})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("one")
	cv.send("two")
	rs := cv.close()
	if len(rs) != 2 || rs[0].Result != "echo: one" || rs[1].Result != "echo: two" {
		t.Fatalf("results %+v", rs)
	}
	// One session holds both turns: the second saw the first.
	_, entries, err := rt.Session(context.Background(), cv.c.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 {
		t.Errorf("transcript has %d entries, want 4 (two exchanges)", len(entries))
	}
}

// A message sent while a turn runs waits for a turn of its own: it never
// joins the turn in progress, even at a loop boundary.
func TestConversationQueuesAMessageSentDuringATurn(t *testing.T) {
	f := newFixture(t)
	started, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var seen [][]string // the user texts of each request
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		var texts []string
		for _, m := range req.Messages {
			if m.Role == llm.RoleUser && m.Text() != "" {
				texts = append(texts, m.Text())
			}
		}
		mu.Lock()
		seen = append(seen, texts)
		mu.Unlock()
		last := req.Messages[len(req.Messages)-1]
		switch {
		case last.Text() == "first":
			close(started)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return llm.Reply(llm.ToolUse("t1", "Read", json.RawMessage(`{"file_path":"notes.txt"}`))), nil
		case len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult:
			return llm.Reply(llm.Text("read it")), nil
		}
		return echo(ctx, req)
	}
	rt := f.open(t, cadre.Options{})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("first")
	wait(t, started, "model call for the first message")
	cv.send("second")
	close(release)
	rs := cv.close()
	if len(rs) != 2 || rs[0].Result != "read it" || rs[1].Result != "echo: second" {
		t.Fatalf("results %+v", rs)
	}
	mu.Lock()
	defer mu.Unlock()
	// The first turn's second call (after the tool) did not see "second".
	if len(seen) != 3 || strings.Join(seen[1], "|") != "first" || strings.Join(seen[2], "|") != "first|second" {
		t.Errorf("requests saw %q", seen)
	}
}

// stallOn makes the fixture's model stall on a message with this text
// until its call is cancelled, and answer every other by echoing it.
// called receives once per stalled call.
func stallOn(f *fixture, text string) (called chan struct{}) {
	called = make(chan struct{}, 4)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Messages[len(req.Messages)-1].Text() == text {
			called <- struct{}{}
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return echo(ctx, req)
	}
	return called
}

func TestConversationInterruptEndsOnlyTheTurn(t *testing.T) {
	f := newFixture(t)
	called := stallOn(f, "stall")
	rt := f.open(t, cadre.Options{})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("stall")
	wait(t, called, "the stalling model call")
	cv.send("after") // queued: waits for the next turn
	cv.c.Interrupt()
	rs := cv.close()
	if len(rs) != 2 {
		t.Fatalf("results %+v", rs)
	}
	if !rs[0].IsError || len(rs[0].Errors) != 1 || !strings.Contains(rs[0].Errors[0], "interrupted") {
		t.Errorf("the interrupted turn's result %+v", rs[0])
	}
	if rs[1].IsError || rs[1].Result != "echo: after" {
		t.Errorf("the next turn's result %+v", rs[1])
	}
}

func TestConversationStopEndsEverything(t *testing.T) {
	f := newFixture(t)
	called := stallOn(f, "stall")
	rt := f.open(t, cadre.Options{})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("stall")
	wait(t, called, "the stalling model call")
	cv.send("never")
	if err := cv.c.Stop(); err != nil {
		t.Fatal(err)
	}
	<-cv.ended
	rs := cv.results()
	if len(rs) != 1 || !rs[0].IsError || !strings.Contains(strings.Join(rs[0].Errors, " "), "interrupted") {
		t.Fatalf("results %+v", rs)
	}
	if err := cv.c.Send(context.Background(), cadre.Message{Text: "late"}); err == nil {
		t.Error("Send after Stop succeeded")
	}
}

func TestConversationSetModelTakesEffect(t *testing.T) {
	f := newFixture(t)
	f.fn = echo
	script := filepath.Join(f.dir, "other.yaml")
	if err := os.WriteFile(script, []byte("model: other\nagents:\n  main:\n    - text: never used, turn 0 was the first model's\n    - text: from the other model\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := f.open(t, cadre.Options{})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	opened := cv.c.Model()
	if err := cv.c.SetModel("no-such-provider:nothing"); err == nil {
		t.Error("SetModel accepted a model that does not resolve")
	}
	if cv.c.Model() != opened || opened == "" {
		t.Errorf("Model() = %q after a refused SetModel, want the opening model %q", cv.c.Model(), opened)
	}
	cv.send("one")
	cv.waitResults(1)
	if err := cv.c.SetModel("script:" + script); err != nil {
		t.Fatal(err)
	}
	cv.send("two")
	cv.waitResults(2)
	if cv.c.Model() == opened {
		t.Errorf("Model() = %q after SetModel to another model", cv.c.Model())
	}
	if err := cv.c.SetModel(""); err != nil { // back to the model it opened with
		t.Fatal(err)
	}
	if cv.c.Model() != opened {
		t.Errorf("Model() = %q after going back, want %q", cv.c.Model(), opened)
	}
	cv.send("three")
	rs := cv.close()
	if len(rs) != 3 || rs[0].Result != "echo: one" || rs[1].Result != "from the other model" || rs[2].Result != "echo: three" {
		t.Fatalf("results %+v, %+v", rs[0], rs[len(rs)-1])
	}
}

func TestConversationSetPermissionModeTakesEffect(t *testing.T) {
	f := newFixture(t) // "bash" runs `echo ran`, which asks in the default mode
	rt := f.open(t, cadre.Options{})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	if err := cv.c.SetPermissionMode("sideways"); err == nil {
		t.Error("SetPermissionMode accepted an unknown mode")
	}
	cv.send("bash")
	cv.waitResults(1)
	if err := cv.c.SetPermissionMode(cadre.PermissionBypass); err != nil {
		t.Fatal(err)
	}
	cv.send("bash again")
	rs := cv.close()
	if len(rs) != 2 {
		t.Fatalf("results %+v", rs)
	}
	if len(rs[0].PermissionDenials) != 1 || !strings.Contains(rs[0].Result, "denied") {
		t.Errorf("default mode: %+v", rs[0])
	}
	if len(rs[1].PermissionDenials) != 0 || rs[1].Result != "Answer: ran\n" && rs[1].Result != "Answer: ran" {
		t.Errorf("bypassPermissions: %+v", rs[1])
	}
}

func TestConversationOptionsOverrideTheRuntimes(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	cv := openConvo(t, rt, cadre.OpenRequest{PermissionMode: cadre.PermissionBypass})
	cv.send("bash")
	rs := cv.close()
	if len(rs) != 1 || len(rs[0].PermissionDenials) != 0 {
		t.Fatalf("results %+v", rs)
	}
	// The runtime's mode is untouched: another conversation asks.
	other := openConvo(t, rt, cadre.OpenRequest{})
	other.send("bash")
	if rs := other.close(); len(rs) != 1 || len(rs[0].PermissionDenials) != 1 {
		t.Fatalf("second conversation: %+v", rs)
	}
}

func TestOpenChecksItsRequest(t *testing.T) {
	f := newFixture(t)
	rt := f.open(t, cadre.Options{})
	for _, req := range []cadre.OpenRequest{
		{SessionID: "../../etc/passwd"},
		{Fork: true},
		{Resume: "01a209e0-90cc-79bb-acf2-533d8789d5f4", SessionID: "01a209e0-90cc-79bb-acf2-533d8789d5f5"},
		{PermissionMode: "sideways"},
		{Model: "no-such-provider:nothing"},
	} {
		if c, err := rt.Open(context.Background(), req); err == nil {
			c.Stop()
			t.Errorf("%+v: opened", req)
		}
	}
}

func TestConversationSessionIDForkAndNoPersist(t *testing.T) {
	f := newFixture(t)
	f.fn = echo
	rt := f.open(t, cadre.Options{})
	const id = "01a209e0-90cc-79bb-acf2-533d8789d5f4"
	cv := openConvo(t, rt, cadre.OpenRequest{SessionID: id})
	if cv.c.SessionID() != id {
		t.Fatalf("session id %q", cv.c.SessionID())
	}
	cv.send("remember me")
	cv.close()

	const forked = "01a209e0-90cc-79bb-acf2-533d8789d5f6"
	fk := openConvo(t, rt, cadre.OpenRequest{Resume: id, Fork: true, SessionID: forked})
	fk.send("and now?")
	fk.close()
	_, orig, err := rt.Session(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	_, copied, err := rt.Session(context.Background(), forked)
	if err != nil {
		t.Fatal(err)
	}
	if len(orig) != 2 || len(copied) != 4 {
		t.Errorf("original has %d entries (want 2, untouched), fork %d (want 4: the copy and its turn)", len(orig), len(copied))
	}

	np := openConvo(t, rt, cadre.OpenRequest{NoPersist: true})
	np.send("forget me")
	if rs := np.close(); len(rs) != 1 || rs[0].Result != "echo: forget me" {
		t.Fatalf("results %+v", rs)
	}
	if _, _, err := rt.Session(context.Background(), np.c.SessionID()); err == nil {
		t.Error("a conversation with NoPersist left a session record")
	}
	entries, err := os.ReadDir(filepath.Join(f.home, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), np.c.SessionID()) {
			t.Errorf("a conversation with NoPersist wrote %s", e.Name())
		}
	}
}

// Ctrl+B on a stalled foreground subagent: the parent's Agent call returns
// at once and its turn ends while the child still runs; the child's
// notification turn comes after it, and Close waits for it.
func TestConversationBackgroundMovesAStalledChild(t *testing.T) {
	f := newFixture(t)
	childCalled, release := make(chan struct{}, 1), make(chan struct{})
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent == "slow" {
			childCalled <- struct{}{}
			select {
			case <-release:
				return llm.Reply(llm.Text("SLOW-DONE")), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		last := req.Messages[len(req.Messages)-1]
		switch {
		case strings.Contains(last.Text(), "<task-notification>"):
			if !strings.Contains(last.Text(), "SLOW-DONE") {
				return llm.Reply(llm.Text("notified without the result")), nil
			}
			return llm.Reply(llm.Text("the slow agent finished")), nil
		case len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult:
			return llm.Reply(llm.Text("moved on: " + last.Content[0].ResultText())), nil
		}
		return llm.Reply(llm.ToolUse("call-slow", "Agent", json.RawMessage(`{"subagent_type":"slow","description":"Take long","prompt":"Take your time."}`))), nil
	}
	rt := f.open(t, cadre.Options{Agents: []cadre.Agent{{Name: "slow", Description: "Takes long.", Prompt: "You are slow.", Tools: []string{}}}})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	if _, err := cv.c.Background("call-none"); err == nil {
		t.Error("Background of an unknown call succeeded")
	}
	cv.send("go")
	wait(t, childCalled, "the child's model call")
	moved, err := cv.c.Background("call-slow")
	if err != nil || !moved {
		t.Fatalf("Background: moved %v, %v", moved, err)
	}
	// The parent's turn ends while the child is still held.
	rs := cv.waitResults(1)
	if rs[0].IsError || !strings.HasPrefix(rs[0].Result, "moved on: ") {
		t.Fatalf("the parent's turn: %+v", rs[0])
	}
	closed := make(chan error, 1)
	go func() { closed <- cv.c.Close() }()
	close(release)
	if err := wait(t, closed, "Close"); err != nil {
		t.Fatal(err)
	}
	<-cv.ended
	rs = cv.results()
	if len(rs) != 2 || rs[1].Result != "the slow agent finished" {
		t.Fatalf("results %+v", rs)
	}
}

// asks records permission requests and answers them with decide.
type asks struct {
	mu     sync.Mutex
	got    []cadre.PermissionRequest
	decide func(cadre.PermissionRequest) cadre.PermissionDecision
}

func (a *asks) fn(_ context.Context, req cadre.PermissionRequest) (cadre.PermissionDecision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, req)
	return a.decide(req), nil
}

func (a *asks) requests() []cadre.PermissionRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]cadre.PermissionRequest(nil), a.got...)
}

// Attack: "allow for this session" in one conversation must not approve a
// call in another conversation of the same runtime.
func TestARememberedRuleStaysInItsConversation(t *testing.T) {
	f := newFixture(t) // "bash" runs `echo ran`
	a := &asks{decide: func(req cadre.PermissionRequest) cadre.PermissionDecision {
		return cadre.PermissionDecision{Allow: true, Remember: req.Suggestions}
	}}
	rt := f.open(t, cadre.Options{Permission: a.fn})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("bash")
	cv.send("bash again")
	rs := cv.close()
	if got := a.requests(); len(got) != 1 || len(got[0].Suggestions) != 1 || got[0].Suggestions[0] != "Bash(echo ran:*)" {
		t.Fatalf("asked %+v, want once, suggesting Bash(echo ran:*)", got)
	}
	if len(rs) != 2 || rs[1].IsError || len(rs[1].PermissionDenials) != 0 {
		t.Fatalf("results %+v", rs)
	}
	other := openConvo(t, rt, cadre.OpenRequest{})
	other.send("bash")
	other.close()
	if got := a.requests(); len(got) != 2 {
		t.Errorf("the second conversation was not asked: %d requests", len(got))
	}
}

// A subagent's request names it and the Agent call that started it, and
// its answer is honoured: a denial's message reaches the child's model, a
// changed input is what runs.
func TestASubagentsRequestNamesIt(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var childSaw []string
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if req.Agent == "runner" {
			if len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult {
				mu.Lock()
				childSaw = append(childSaw, last.Content[0].ResultText())
				mu.Unlock()
				return llm.Reply(llm.Text("child done")), nil
			}
			return llm.Reply(llm.ToolUse("c1", "Bash", json.RawMessage(`{"command":"echo from-child"}`))), nil
		}
		if len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult {
			return llm.Reply(llm.Text("main done")), nil
		}
		return llm.Reply(llm.ToolUse("call-run", "Agent", json.RawMessage(`{"subagent_type":"runner","description":"Run it","prompt":"Run the command."}`))), nil
	}
	a := &asks{decide: func(req cadre.PermissionRequest) cadre.PermissionDecision {
		return cadre.PermissionDecision{Allow: true, UpdatedInput: json.RawMessage(`{"command":"echo changed"}`)}
	}}
	rt := f.open(t, cadre.Options{Agents: []cadre.Agent{{Name: "runner", Description: "Runs commands.", Prompt: "Run.", Tools: []string{"Bash"}, PermissionMode: cadre.PermissionDefault}}})
	cv := openConvo(t, rt, cadre.OpenRequest{Permission: a.fn}) // the conversation's own asker
	cv.send("go")
	if rs := cv.close(); len(rs) != 1 || rs[0].Result != "main done" {
		t.Fatalf("results %+v", rs)
	}
	got := a.requests()
	if len(got) != 1 {
		t.Fatalf("requests %+v", got)
	}
	if r := got[0]; r.Agent != "runner" || r.AgentID == "" || r.ParentToolUseID != "call-run" || r.Target != "echo from-child" {
		t.Errorf("request %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(childSaw) != 1 || strings.TrimSpace(childSaw[0]) != "changed" {
		t.Errorf("the child's command printed %q, want the changed command's output", childSaw)
	}
}

// "@poet text": the agent runs with no main-model call, its events are
// tagged, its answer is the turn's result, and the main agent sees the
// exchange next turn.
func TestConversationRunAgentDirectly(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var mainSaw []string
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent == "poet" {
			return llm.Reply(llm.Text("An old silent pond")), nil
		}
		var texts []string
		for _, m := range req.Messages {
			texts = append(texts, m.Text())
		}
		mu.Lock()
		mainSaw = append(mainSaw, strings.Join(texts, "|"))
		mu.Unlock()
		return llm.Reply(llm.Text("main answered")), nil
	}
	rt := f.open(t, cadre.Options{Agents: []cadre.Agent{{Name: "poet", Description: "Writes haiku.", Prompt: "You write haiku.", Tools: []string{}}}})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	if err := cv.c.RunAgent(context.Background(), "nobody", "hi"); err == nil {
		t.Error("RunAgent of an unknown agent succeeded")
	}
	if err := cv.c.RunAgent(context.Background(), "poet", "A haiku about a frog."); err != nil {
		t.Fatal(err)
	}
	cv.send("what did the poet say?")
	rs := cv.close()
	if len(rs) != 2 || rs[0].IsError || rs[0].Result != "An old silent pond" || rs[1].Result != "main answered" {
		t.Fatalf("results %+v", rs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(mainSaw) != 1 || mainSaw[0] != "@poet A haiku about a frog.|An old silent pond|what did the poet say?" {
		t.Errorf("the main agent's requests saw %q", mainSaw)
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	tagged := false
	for _, ev := range cv.evs {
		if ev.Type == cadre.EventAssistant && ev.AgentType == "poet" && strings.HasPrefix(ev.ParentToolUseID, "direct_") {
			tagged = true
		}
	}
	if !tagged {
		t.Error("no poet event tagged with its direct call")
	}
}

// Attack: a rule remembered from the user's approval is an allow rule for
// the tree, not a widening of a child's mode: a plan-mode child still
// cannot run what the main agent was allowed to.
func TestARememberedRuleDoesNotWidenAChildsMode(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var childResult string
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		toolResult := len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult
		if req.Agent == "planner" {
			if toolResult {
				mu.Lock()
				childResult = last.Content[0].ResultText()
				mu.Unlock()
				return llm.Reply(llm.Text("planned")), nil
			}
			return llm.Reply(llm.ToolUse("c1", "Bash", json.RawMessage(`{"command":"echo ran"}`))), nil
		}
		switch {
		case toolResult && last.Content[0].ToolUseID == "m1":
			return llm.Reply(llm.ToolUse("call-plan", "Agent", json.RawMessage(`{"subagent_type":"planner","description":"Plan","prompt":"Plan it."}`))), nil
		case toolResult:
			return llm.Reply(llm.Text("main done")), nil
		}
		return llm.Reply(llm.ToolUse("m1", "Bash", json.RawMessage(`{"command":"echo ran"}`))), nil
	}
	a := &asks{decide: func(req cadre.PermissionRequest) cadre.PermissionDecision {
		return cadre.PermissionDecision{Allow: true, Remember: []string{"Bash"}}
	}}
	rt := f.open(t, cadre.Options{Permission: a.fn, Agents: []cadre.Agent{{Name: "planner", Description: "Plans.", Prompt: "Plan.", Tools: []string{"Bash"}, PermissionMode: cadre.PermissionPlan}}})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("go")
	if rs := cv.close(); len(rs) != 1 || rs[0].Result != "main done" {
		t.Fatalf("results %+v", rs)
	}
	if got := a.requests(); len(got) != 1 || got[0].Agent != "main" {
		t.Fatalf("requests %+v: want the main agent's one", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(childResult, "plan mode") {
		t.Errorf("the plan-mode child's Bash call got %q, want a plan-mode denial", childResult)
	}
}
