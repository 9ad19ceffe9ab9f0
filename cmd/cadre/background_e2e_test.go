package main

import (
	"encoding/json"
	"fmt"
	"github.com/cadre-dev/cadre"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/testkit"
)

// Acceptance tests for background subagents (DESIGN §7.2–7.4, §8, §13,
// §17), driving the real binary against a fake Anthropic server. One
// server answers both the main agent and its children; a request is a
// child's when its system prompt carries childMark
// (internal/childprompt/child_system.md).
//
// Ordering is forced with held replies, never with sleeps: a handler parks
// a request on a channel that another request (or the test) closes, and
// the test goroutine polls srv.Requests() or the state dir with a deadline.

const childMark = "started by another agent to do one task"

// holdFor bounds every hold inside a handler: a hold that runs out means
// the awaited request never came, and the handler answers with a reply
// that makes the test fail with that reason instead of hanging.
const holdFor = 30 * time.Second

var agentIDRE = regexp.MustCompile(`agentId: ([a-z0-9][a-z0-9_-]*)`)

// bgBlock is one content block of a recorded Anthropic request, decoded
// (so "<" is "<" again, not "\u003c").
type bgBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     map[string]any  `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// resultText is the text of a tool_result block, whether its content is a
// string or a list of text blocks.
func (b bgBlock) resultText() string {
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var parts []bgBlock
	json.Unmarshal(b.Content, &parts)
	var out []string
	for _, p := range parts {
		out = append(out, p.Text)
	}
	return strings.Join(out, "\n")
}

type bgMessage struct {
	Role   string
	Blocks []bgBlock
}

// bgCall is one request to the fake server, decoded for the handlers' and
// the assertions' questions.
type bgCall struct {
	req    testkit.Request
	system string
	msgs   []bgMessage
	// reminders are the per-turn <system-reminder> blocks, which msgs
	// leave out: they are context for one request, not conversation.
	reminders []string
	err       error
}

func bgDecode(req testkit.Request) *bgCall {
	c := &bgCall{req: req}
	var body struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if c.err = json.Unmarshal(req.Body, &body); c.err != nil {
		return c
	}
	var sys string
	if json.Unmarshal(body.System, &sys) != nil {
		var blocks []bgBlock
		json.Unmarshal(body.System, &blocks)
		for _, b := range blocks {
			sys += b.Text
		}
	}
	c.system = sys
	for _, m := range body.Messages {
		dm := bgMessage{Role: m.Role}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			dm.Blocks = []bgBlock{{Type: "text", Text: s}}
		} else if err := json.Unmarshal(m.Content, &dm.Blocks); err != nil {
			c.err = fmt.Errorf("message content: %w", err)
			return c
		}
		dm.Blocks = slices.DeleteFunc(dm.Blocks, func(b bgBlock) bool {
			if b.Type == "text" && strings.HasPrefix(b.Text, "<system-reminder>") {
				c.reminders = append(c.reminders, b.Text)
				return true
			}
			return false
		})
		c.msgs = append(c.msgs, dm)
	}
	return c
}

func (c *bgCall) child() bool { return strings.Contains(c.system, childMark) }

// has reports whether any message (not the system prompt, not the tool
// descriptions) holds s.
func (c *bgCall) has(s string) bool {
	for _, m := range c.msgs {
		for _, b := range m.Blocks {
			if strings.Contains(b.Text, s) || strings.Contains(b.resultText(), s) {
				return true
			}
			if b.Type == "tool_use" && strings.Contains(fmt.Sprint(b.Input), s) {
				return true
			}
		}
	}
	return false
}

// notifications are the user text blocks that are task notifications.
func (c *bgCall) notifications() []string {
	var out []string
	for _, m := range c.msgs {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Blocks {
			if b.Type == "text" && strings.Contains(b.Text, "<task-notification>") {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

// uses are the assistant's tool_use blocks named name, oldest first.
func (c *bgCall) uses(name string) []bgBlock {
	var out []bgBlock
	for _, m := range c.msgs {
		for _, b := range m.Blocks {
			if m.Role == "assistant" && b.Type == "tool_use" && b.Name == name {
				out = append(out, b)
			}
		}
	}
	return out
}

// results are the tool_result blocks answering the calls named name.
func (c *bgCall) results(name string) []bgBlock {
	ids := map[string]bool{}
	for _, u := range c.uses(name) {
		ids[u.ID] = true
	}
	var out []bgBlock
	for _, m := range c.msgs {
		for _, b := range m.Blocks {
			if b.Type == "tool_result" && ids[b.ToolUseID] {
				out = append(out, b)
			}
		}
	}
	return out
}

func (c *bgCall) anyToolResult() bool {
	for _, m := range c.msgs {
		for _, b := range m.Blocks {
			if b.Type == "tool_result" {
				return true
			}
		}
	}
	return false
}

// launchedID is the agentId in the first Agent result, as a model would
// read it.
func (c *bgCall) launchedID() string {
	for _, r := range c.results("Agent") {
		if m := agentIDRE.FindStringSubmatch(r.resultText()); m != nil {
			return m[1]
		}
	}
	return ""
}

// dump shows a conversation in failure messages.
func (c *bgCall) dump() string {
	var b strings.Builder
	for i, m := range c.msgs {
		for _, bl := range m.Blocks {
			txt := bl.Text
			switch bl.Type {
			case "tool_use":
				txt = fmt.Sprintf("%s %s %v", bl.ID, bl.Name, bl.Input)
			case "tool_result":
				txt = bl.ToolUseID + ": " + bl.resultText()
			}
			fmt.Fprintf(&b, "  %d %s %s: %s\n", i, m.Role, bl.Type, txt)
		}
	}
	return b.String()
}

// bgHandle adapts a handler over decoded calls; a request that does not
// decode gets an answer that fails the test's assertions with the reason.
func bgHandle(h func(c *bgCall) testkit.Reply) testkit.Handler {
	return func(req testkit.Request) testkit.Reply {
		c := bgDecode(req)
		if c.err != nil {
			return testkit.Reply{Text: "TEST-HARNESS-ERROR: request does not decode: " + c.err.Error()}
		}
		return h(c)
	}
}

// bgCalls decodes every request the server has seen, split into the main
// agent's and the children's.
func bgCalls(srv *testkit.AnthropicServer) (main, children []*bgCall) {
	for _, r := range srv.Requests() {
		c := bgDecode(r)
		if c.child() {
			children = append(children, c)
		} else {
			main = append(main, c)
		}
	}
	return main, children
}

// bgFlag is a one-shot event a handler can wait for.
type bgFlag struct {
	once sync.Once
	ch   chan struct{}
}

func newBGFlag() *bgFlag { return &bgFlag{ch: make(chan struct{})} }

func (f *bgFlag) set() { f.once.Do(func() { close(f.ch) }) }

// wait waits for the flag inside a handler, at most holdFor.
func (f *bgFlag) wait() bool {
	select {
	case <-f.ch:
		return true
	case <-time.After(holdFor):
		return false
	}
}

// heldForever is a Wait channel that is never closed: the fake server
// releases the request only when the client goes away or the test ends.
func heldForever() <-chan struct{} { return make(chan struct{}) }

// bgEventually polls cond from the test goroutine until it holds, failing
// the test after 30 s.
func bgEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// taskLines are the stream-json system lines of this subtype.
func taskLines(t *testing.T, out, subtype string) []map[string]any {
	t.Helper()
	var ls []map[string]any
	for _, l := range lines(t, out) {
		if l["type"] == "system" && l["subtype"] == subtype {
			ls = append(ls, l)
		}
	}
	return ls
}

// finalResult is the last stream-json line, which must be a result.
func finalResult(t *testing.T, out string) map[string]any {
	t.Helper()
	ls := lines(t, out)
	if res := ls[len(ls)-1]; res["type"] == "result" {
		return res
	}
	t.Fatalf("the last line is not a result:\n%s", out)
	return nil
}

// cliTasks is `cadre tasks --json`.
func cliTasks(t *testing.T, e *env) []task.Task {
	t.Helper()
	p := ok(t, e.run("", "tasks", "--json"))
	var ts []cadre.Task
	if err := json.Unmarshal([]byte(p.stdout), &ts); err != nil {
		t.Fatalf("cadre tasks --json: %v\n%s", err, p.stdout)
	}
	out := make([]task.Task, 0, len(ts))
	for _, c := range ts {
		out = append(out, record(c))
	}
	return out
}

// cliTask is `cadre tasks show ID --json`.
func cliTask(t *testing.T, e *env, id string) task.Task {
	t.Helper()
	p := ok(t, e.run("", "tasks", "show", id, "--json"))
	var c cadre.Task
	if err := json.Unmarshal([]byte(p.stdout), &c); err != nil {
		t.Fatalf("cadre tasks show --json: %v\n%s", err, p.stdout)
	}
	return record(c)
}

// record is a task as printed (cadre.Task, the JSON shape) in the form of
// the store's record, which the tests compare.
func record(c cadre.Task) task.Task {
	return task.Task{
		ID: c.ID, Kind: task.Kind(c.Kind), Agent: c.Agent, Name: c.Name, Description: c.Description, Prompt: c.Prompt,
		ParentSessionID: c.ParentSessionID, RootSessionID: c.RootSessionID, ChildSessionID: c.ChildSessionID, ToolUseID: c.ToolUseID,
		Status: task.Status(c.Status), Result: c.Result, Progress: c.Progress, Error: c.Error,
		Usage: c.Usage, CostUSD: c.CostUSD, ToolUses: c.ToolUses, OutputFile: c.OutputFile, Notified: c.Notified, Archived: c.Archived,
		CancelRequested: c.CancelRequested, Owner: c.Owner, Heartbeat: c.Heartbeat, Created: c.Created, Started: c.Started, Finished: c.Finished,
	}
}

func bgAgentCall(id, description, prompt string, extra ...any) testkit.ToolCall {
	in := map[string]any{"description": description, "prompt": prompt, "subagent_type": "general-purpose", "run_in_background": true}
	for i := 0; i+1 < len(extra); i += 2 {
		in[extra[i].(string)] = extra[i+1]
	}
	return testkit.ToolCall{ID: id, Name: "Agent", Input: in}
}

func globCall() []testkit.ToolCall {
	return []testkit.ToolCall{{Name: "Glob", Input: map[string]any{"pattern": "*.txt"}}}
}

// checkBGNotification checks one notification's fields (its tool-use-id
// too, unless toolUseID is "").
func checkBGNotification(t *testing.T, n, id, toolUseID, status string, want ...string) {
	t.Helper()
	want = append([]string{"<task-id>" + id + "</task-id>", "<status>" + status + "</status>"}, want...)
	if toolUseID != "" {
		want = append(want, "<tool-use-id>"+toolUseID+"</tool-use-id>")
	}
	for _, w := range want {
		if !strings.Contains(n, w) {
			t.Errorf("notification lacks %q:\n%s", w, n)
		}
	}
}

// checkBGTaskLine checks a task_started / task_notification line.
func checkBGTaskLine(t *testing.T, l map[string]any, id, toolUseID string, kv ...string) {
	t.Helper()
	if l["task_id"] != id || l["tool_use_id"] != toolUseID {
		t.Errorf("%v line: task_id %v, tool_use_id %v; want %s, %s", l["subtype"], l["task_id"], l["tool_use_id"], id, toolUseID)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if l[kv[i]] != kv[i+1] {
			t.Errorf("%v line: %s = %v, want %s", l["subtype"], kv[i], l[kv[i]], kv[i+1])
		}
	}
}

// 1. A background child's result reaches the main agent as a notification,
// in a new turn of the same process, and the run waits for it.
func TestBackgroundNotificationInTheSameProcess(t *testing.T) {
	const useID = "toolu_bg_notify"
	mainEnded := newBGFlag()
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			// Held until the main agent has ended its turn, so the result
			// can only arrive as a notification in a turn of its own.
			return testkit.Reply{Text: "BG-RESULT-42", Wait: mainEnded.ch}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "MAIN-ANSWER: the agent found the number."}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall(useID, "find the number", "BG-MARKER: find the number")}}
		}
		mainEnded.set()
		return testkit.Reply{Text: "Launched it; waiting."}
	}))
	p := ok(t, e.run("", "-p", "find the number in the background", "--model", sonnet, "--output-format", "stream-json"))

	mains, children := bgCalls(srv)
	if len(children) != 1 || !children[0].has("BG-MARKER") {
		t.Fatalf("%d child requests; want one holding the prompt", len(children))
	}
	last := mains[len(mains)-1]
	id := last.launchedID()
	if id == "" {
		t.Fatalf("no agentId in the launch result:\n%s", last.dump())
	}
	ns := last.notifications()
	if len(ns) != 1 {
		t.Fatalf("%d notifications in the last main request, want 1:\n%s", len(ns), last.dump())
	}
	checkBGNotification(t, ns[0], id, useID, "completed", "BG-RESULT-42")
	// The notification opened a turn of its own, after the answer to the prompt.
	if m := last.msgs[len(last.msgs)-1]; m.Role != "user" || !strings.Contains(m.Blocks[len(m.Blocks)-1].Text, "<task-notification>") {
		t.Errorf("the last request does not end with the notification:\n%s", last.dump())
	}
	if !last.has("Launched it; waiting.") {
		t.Errorf("the notification came before the main agent ended its turn:\n%s", last.dump())
	}
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: the agent found the number." || res["is_error"] != false {
		t.Errorf("final result %v, want the answer to the notification", res)
	}
	started, notified := taskLines(t, p.stdout, "task_started"), taskLines(t, p.stdout, "task_notification")
	if len(started) != 1 || len(notified) != 1 {
		t.Fatalf("%d task_started and %d task_notification lines, want 1 each:\n%s", len(started), len(notified), p.stdout)
	}
	checkBGTaskLine(t, started[0], id, useID)
	checkBGTaskLine(t, notified[0], id, useID, "status", "completed")

	ts := cliTasks(t, e)
	if len(ts) != 1 {
		t.Fatalf("cadre tasks lists %d tasks, want 1: %+v", len(ts), ts)
	}
	if got := ts[0]; got.ID != id || got.Status != task.StatusCompleted || !got.Notified || !strings.Contains(got.Result, "BG-RESULT-42") || got.ToolUseID != useID {
		t.Errorf("task record %+v; want %s completed, notified, with the result", got, id)
	}
}

// 2. TaskStop cancels a running child: it ends killed, keeping the text it
// had produced, and the main agent is told so.
func TestBackgroundTaskStopKeepsPartialOutput(t *testing.T) {
	const useID = "toolu_bg_stop"
	childWaiting := newBGFlag()
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && !c.anyToolResult():
			return testkit.Reply{Text: "PARTIAL-WORK", ToolCalls: globCall()}
		case c.child():
			childWaiting.set()
			return testkit.Reply{Text: "never sent", Wait: heldForever()}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "MAIN-ANSWER: stopped it."}
		case len(c.uses("TaskStop")) > 0:
			return testkit.Reply{Text: "Stopped; waiting for the notification."}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall(useID, "slow work", "STOP-MARKER: work slowly")}}
		}
		id := c.launchedID()
		if id == "" {
			return testkit.Reply{Text: "TEST-HARNESS-ERROR: no agentId in the launch result"}
		}
		if !childWaiting.wait() {
			return testkit.Reply{Text: "TEST-HARNESS-ERROR: the child's second request never came"}
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "TaskStop", Input: map[string]any{"task_id": id}}}}
	}))
	p := ok(t, e.run("", "-p", "start and stop", "--model", sonnet, "--output-format", "stream-json"))

	mains, _ := bgCalls(srv)
	last := mains[len(mains)-1]
	id := last.launchedID()
	stops := last.results("TaskStop")
	if len(stops) != 1 || stops[0].IsError || !strings.Contains(stops[0].resultText(), id) {
		t.Fatalf("TaskStop results %+v, want one success naming %s:\n%s", stops, id, last.dump())
	}
	ns := last.notifications()
	if len(ns) != 1 {
		t.Fatalf("%d notifications, want 1:\n%s", len(ns), last.dump())
	}
	checkBGNotification(t, ns[0], id, useID, "killed", "was stopped", "PARTIAL-WORK")
	notified := taskLines(t, p.stdout, "task_notification")
	if len(notified) != 1 {
		t.Fatalf("%d task_notification lines, want 1:\n%s", len(notified), p.stdout)
	}
	checkBGTaskLine(t, notified[0], id, useID, "status", "stopped")
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: stopped it." {
		t.Errorf("final result %v", res)
	}
	rec := cliTask(t, e, id)
	if rec.Status != task.StatusKilled || !strings.Contains(rec.Result, "PARTIAL-WORK") || !rec.Notified {
		t.Errorf("task record: status %s, result %q, notified %v; want killed, the partial text, notified", rec.Status, rec.Result, rec.Notified)
	}
}

// 3. SendMessage reaches a running child at its next loop boundary, and
// resumes a finished one with its whole context.
func TestBackgroundSendMessageToRunningThenFinishedChild(t *testing.T) {
	const useID = "toolu_bg_worker"
	messageSent := newBGFlag()
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if c.child() {
			switch {
			case c.has("FOLLOW-UP"):
				return testkit.Reply{Text: "FOLLOW-UP-DONE"}
			case c.anyToolResult() && c.has("EXTRA-INSTRUCTION"):
				return testkit.Reply{Text: "GOT-EXTRA"}
			case c.anyToolResult():
				return testkit.Reply{Text: "NO-EXTRA: the message did not arrive"}
			}
			// Held until SendMessage has run, so the message is waiting
			// when this step's tool call ends.
			if !messageSent.wait() {
				return testkit.Reply{Text: "TEST-HARNESS-ERROR: SendMessage never ran"}
			}
			return testkit.Reply{Text: "Looking around.", ToolCalls: globCall()}
		}
		sends, n := len(c.uses("SendMessage")), len(c.notifications())
		switch {
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall(useID, "work on it", "WORKER-MARKER: work", "name", "worker")}}
		case sends == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "SendMessage", Input: map[string]any{"to": "worker", "message": "EXTRA-INSTRUCTION", "summary": "one more thing"}}}}
		case n == 0:
			messageSent.set()
			return testkit.Reply{Text: "Message sent; waiting."}
		case n == 1 && sends == 1:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "SendMessage", Input: map[string]any{"to": "worker", "message": "FOLLOW-UP", "summary": "follow up"}}}}
		case n == 1:
			return testkit.Reply{Text: "Resumed it; waiting."}
		}
		return testkit.Reply{Text: "MAIN-ANSWER: the worker answered twice."}
	}))
	p := ok(t, e.run("", "-p", "work with the worker", "--model", sonnet, "--output-format", "stream-json"))

	mains, children := bgCalls(srv)
	last := mains[len(mains)-1]
	id := last.launchedID()
	sends := last.results("SendMessage")
	if len(sends) != 2 || sends[0].IsError || sends[1].IsError {
		t.Fatalf("SendMessage results %+v, want two successes:\n%s", sends, last.dump())
	}
	if !strings.Contains(sends[0].resultText(), "queued") || !strings.Contains(sends[1].resultText(), "resumed") {
		t.Errorf("SendMessage said %q then %q; want queued for the running agent, then resumed", sends[0].resultText(), sends[1].resultText())
	}
	var sawExtra, resumed *bgCall
	for _, c := range children {
		if c.anyToolResult() && c.has("EXTRA-INSTRUCTION") && !c.has("FOLLOW-UP") {
			sawExtra = c
		}
		if c.has("FOLLOW-UP") {
			resumed = c
		}
	}
	if sawExtra == nil {
		t.Fatalf("no child request after the tool call held EXTRA-INSTRUCTION; children sent %d requests", len(children))
	}
	// Delivered at the loop boundary: after the tool's result, as a
	// message of its own, not inside the result.
	var order []string
	for _, m := range sawExtra.msgs {
		for _, b := range m.Blocks {
			switch {
			case b.Type == "tool_result":
				order = append(order, "result")
				if strings.Contains(b.resultText(), "EXTRA-INSTRUCTION") {
					t.Errorf("the message was put inside a tool result:\n%s", sawExtra.dump())
				}
			case m.Role == "user" && b.Type == "text" && strings.Contains(b.Text, "EXTRA-INSTRUCTION"):
				order = append(order, "message")
			}
		}
	}
	if strings.Join(order, ",") != "result,message" {
		t.Errorf("child request holds %v, want the tool result, then the message:\n%s", order, sawExtra.dump())
	}
	if resumed == nil {
		t.Fatal("the finished child was not resumed with FOLLOW-UP")
	}
	for _, w := range []string{"WORKER-MARKER", "EXTRA-INSTRUCTION", "GOT-EXTRA", "FOLLOW-UP"} {
		if !resumed.has(w) {
			t.Errorf("the resumed child's request lacks %q (its context from the transcript):\n%s", w, resumed.dump())
		}
	}
	ns := last.notifications()
	if len(ns) != 2 {
		t.Fatalf("%d notifications, want 2:\n%s", len(ns), last.dump())
	}
	checkBGNotification(t, ns[0], id, useID, "completed", "GOT-EXTRA")
	if !strings.Contains(ns[1], "<task-id>"+id+"</task-id>") || !strings.Contains(ns[1], "<status>completed</status>") || !strings.Contains(ns[1], "FOLLOW-UP-DONE") {
		t.Errorf("second notification:\n%s", ns[1])
	}
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: the worker answered twice." {
		t.Errorf("final result %v", res)
	}
}

// 4. Background runs go through a lane of subagents.maxConcurrent.
func TestBackgroundLaneLimit(t *testing.T) {
	const n, lane = 20, 3
	var (
		mu              sync.Mutex
		started, active int
		maxActive       int
		wake            = make(chan struct{})
	)
	// A child is active from its first request until its second one is
	// answered (its lane slot is held all along). First requests are held
	// until lane children are active or all have started: with a bigger
	// lane the extra children arrive while these are held and show.
	first := func() testkit.Reply {
		mu.Lock()
		started++
		active++
		maxActive = max(maxActive, active)
		if active >= lane || started == n {
			close(wake)
			wake = make(chan struct{})
		}
		w := wake
		mu.Unlock()
		for {
			mu.Lock()
			done := active >= lane || started == n
			mu.Unlock()
			if done {
				break
			}
			select {
			case <-w:
			case <-time.After(holdFor):
				return testkit.Reply{Text: "TEST-HARNESS-ERROR: held too long"}
			}
			mu.Lock()
			w = wake
			mu.Unlock()
		}
		return testkit.Reply{Text: "Looking.", ToolCalls: globCall()}
	}
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if c.child() {
			if !c.anyToolResult() {
				return first()
			}
			mu.Lock()
			active--
			mu.Unlock()
			return testkit.Reply{Text: "LANE-DONE"}
		}
		if len(c.uses("Agent")) == 0 {
			var cs []testkit.ToolCall
			for i := range n {
				cs = append(cs, bgAgentCall(fmt.Sprintf("toolu_lane_%02d", i), fmt.Sprintf("lane job %d", i), fmt.Sprintf("LANE-%02d: look around", i)))
			}
			return testkit.Reply{ToolCalls: cs}
		}
		if len(c.notifications()) < n {
			return testkit.Reply{Text: fmt.Sprintf("%d of %d done; waiting.", len(c.notifications()), n)}
		}
		return testkit.Reply{Text: "MAIN-ANSWER: all twenty done."}
	}))
	e.write(".cadre/settings.json", fmt.Sprintf(`{"subagents": {"maxConcurrent": %d}}`, lane))
	p := ok(t, e.run("", "-p", "fan out twenty", "--model", sonnet, "--output-format", "stream-json"))

	mu.Lock()
	if maxActive != lane {
		t.Errorf("at most %d children were active at once, want exactly %d (the lane)", maxActive, lane)
	}
	mu.Unlock()
	mains, _ := bgCalls(srv)
	last := mains[len(mains)-1]
	ids := map[string]bool{}
	for _, nt := range last.notifications() {
		if !strings.Contains(nt, "<status>completed</status>") || !strings.Contains(nt, "LANE-DONE") {
			t.Errorf("notification:\n%s", nt)
		}
		m := regexp.MustCompile(`<task-id>([^<]+)</task-id>`).FindStringSubmatch(nt)
		if m == nil || ids[m[1]] {
			t.Errorf("notification without a task id, or a second one for the same task:\n%s", nt)
			continue
		}
		ids[m[1]] = true
	}
	if len(ids) != n {
		t.Errorf("%d tasks notified, want %d", len(ids), n)
	}
	if len(taskLines(t, p.stdout, "task_notification")) != n {
		t.Errorf("%d task_notification lines, want %d", len(taskLines(t, p.stdout, "task_notification")), n)
	}
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: all twenty done." {
		t.Errorf("final result %v", res)
	}
}

// 5. A process killed while a background child runs leaves a failed task
// and an intact transcript; the child can be resumed from it.
func TestBackgroundSIGKILLThenRestart(t *testing.T) {
	const useID = "toolu_bg_crash"
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if c.child() {
			if c.has("RESUME-NOW") {
				return testkit.Reply{Text: "RESUMED-RESULT"}
			}
			return testkit.Reply{Text: "never sent", Wait: heldForever()}
		}
		if c.has("RESUME-ASK") {
			switch {
			case len(c.uses("SendMessage")) == 0:
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "SendMessage", Input: map[string]any{"to": c.launchedID(), "message": "RESUME-NOW: finish the job", "summary": "resume after the crash"}}}}
			case len(c.notifications()) == 0:
				return testkit.Reply{Text: "Resumed; waiting."}
			}
			return testkit.Reply{Text: "MAIN-ANSWER: the worker is back."}
		}
		if len(c.uses("Agent")) == 0 {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall(useID, "long job", "CRASH-MARKER: do the long job")}}
		}
		return testkit.Reply{Text: "Launched; waiting."}
	}))
	r := e.start("-p", "start a long job", "--model", sonnet, "--output-format", "stream-json")
	// Killed once the child is mid-request and the main agent has its
	// launch result (so its transcript is whole up to there).
	bgEventually(t, "the child's request and the main agent's second request", func() bool {
		mains, children := bgCalls(srv)
		return len(children) == 1 && len(mains) == 2
	})
	if err := r.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := r.wait(t, 10*time.Second)
	if st, _ := r.cmd.ProcessState.Sys().(syscall.WaitStatus); !st.Signaled() || st.Signal() != syscall.SIGKILL {
		t.Fatalf("not killed by SIGKILL: exit %d, stderr %s", killed.code, killed.stderr)
	}
	mainID := sessionID(t, killed)
	mains, _ := bgCalls(srv)
	id := mains[1].launchedID()
	if id == "" {
		t.Fatalf("no agentId in the launch result:\n%s", mains[1].dump())
	}

	ts := cliTasks(t, e)
	if len(ts) != 1 || ts[0].ID != id {
		t.Fatalf("tasks after the kill: %+v, want just %s", ts, id)
	}
	if got := ts[0]; got.Status != task.StatusFailed || !strings.Contains(got.Error, "ended before it finished") {
		t.Errorf("task after the kill: status %s, error %q; want failed, saying its process ended", got.Status, got.Error)
	}
	for _, tk := range ts {
		if !tk.Status.Terminal() {
			t.Errorf("task %s is still %s after the restart", tk.ID, tk.Status)
		}
	}
	path := filepath.Join(e.home, "sessions", id+".jsonl")
	var prompt bool
	for _, l := range transcriptLines(t, path) {
		b, _ := json.Marshal(l["message"])
		if l["type"] == "user" && strings.Contains(string(b), "CRASH-MARKER") {
			prompt = true
		}
	}
	if !prompt {
		t.Errorf("the child's transcript %s lacks its prompt", path)
	}

	p := ok(t, e.run("", "-p", "RESUME-ASK: wake the worker", "--model", sonnet, "--output-format", "stream-json", "--resume", mainID))
	if got := sessionID(t, p); got != mainID {
		t.Errorf("resumed as %s, want %s", got, mainID)
	}
	mains, children := bgCalls(srv)
	var resumed *bgCall
	for _, c := range children {
		if c.has("RESUME-NOW") {
			resumed = c
		}
	}
	if resumed == nil {
		t.Fatal("the child was not resumed")
	}
	if !resumed.has("CRASH-MARKER") {
		t.Errorf("the resumed child lacks its original prompt:\n%s", resumed.dump())
	}
	last := mains[len(mains)-1]
	if rs := last.results("SendMessage"); len(rs) != 1 || rs[0].IsError {
		t.Fatalf("SendMessage result %+v:\n%s", rs, last.dump())
	}
	ns := last.notifications()
	if len(ns) != 1 {
		t.Fatalf("%d notifications after the resume, want 1:\n%s", len(ns), last.dump())
	}
	checkBGNotification(t, ns[0], id, "", "completed", "RESUMED-RESULT")
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: the worker is back." {
		t.Errorf("final result %v", res)
	}
	if rec := cliTask(t, e, id); rec.Status != task.StatusCompleted {
		t.Errorf("task after the resume: %s, want completed", rec.Status)
	}
}

// 6. However TaskOutput and the end of the run interleave, the main agent
// sees the child's result exactly once (S-N1): five runs left to race,
// and one whose child is released only when the TaskOutput call is handed
// out, so that TaskOutput is most likely already waiting when it ends.
func TestBackgroundResultDeliveredOnceWithTaskOutputRacing(t *testing.T) {
	for i := range 6 {
		held := i == 5
		via := raceRun(t, held)
		t.Logf("run %d (child held: %v): the result came via %v", i, held, via)
		if len(via) != 1 {
			t.Errorf("run %d (child held: %v): the result reached the main agent %d times (%v), want once", i, held, len(via), via)
		}
	}
}

// raceRun is one run of test 6: it returns how the child's result reached
// the main agent ("TaskOutput", "notification"), in order.
func raceRun(t *testing.T, holdChild bool) []string {
	t.Helper()
	asked := newBGFlag()
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && holdChild:
			if !asked.wait() {
				return testkit.Reply{Text: "TEST-HARNESS-ERROR: TaskOutput was never called"}
			}
			return testkit.Reply{Text: "RACE-RESULT-7"}
		case c.child():
			return testkit.Reply{Text: "RACE-RESULT-7"}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall("toolu_bg_race", "race", "RACE-MARKER: answer")}}
		case len(c.uses("TaskOutput")) == 0:
			asked.set()
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "TaskOutput", Input: map[string]any{"task_id": c.launchedID(), "block": true}}}}
		}
		return testkit.Reply{Text: "MAIN-ANSWER: got it."}
	}))
	p := ok(t, e.run("", "-p", "race", "--model", sonnet, "--output-format", "stream-json"))
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: got it." {
		t.Errorf("final result %v", res)
	}
	mains, _ := bgCalls(srv)
	last := mains[len(mains)-1]
	var via []string
	for _, r := range last.results("TaskOutput") {
		if r.IsError {
			t.Errorf("TaskOutput failed: %s", r.resultText())
		}
		if strings.Contains(r.resultText(), "RACE-RESULT-7") {
			via = append(via, "TaskOutput")
		}
	}
	for _, n := range last.notifications() {
		if strings.Contains(n, "RACE-RESULT-7") {
			via = append(via, "notification")
		}
	}
	return via
}

// 7. A background child's messages are in stream-json only with --verbose,
// tagged with the Agent call that started it.
func TestBackgroundChildLinesOnlyWhenVerbose(t *testing.T) {
	const useID = "toolu_bg_verbose"
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child() && !c.anyToolResult():
			return testkit.Reply{Text: "CHILD-STEP", ToolCalls: globCall()}
		case c.child():
			return testkit.Reply{Text: "CHILD-FINAL"}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "MAIN-ANSWER: done."}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall(useID, "chatty child", "VERBOSE-MARKER: look")}}
		}
		return testkit.Reply{Text: "Launched; waiting."}
	}))
	for _, verbose := range []bool{true, false} {
		t.Run(fmt.Sprintf("verbose=%v", verbose), func(t *testing.T) {
			args := []string{"-p", "go", "--model", sonnet, "--output-format", "stream-json"}
			if verbose {
				args = append(args, "--verbose")
			}
			p := ok(t, e.run("", args...))
			started := taskLines(t, p.stdout, "task_started")
			if len(started) != 1 || len(taskLines(t, p.stdout, "task_notification")) != 1 {
				t.Fatalf("want one task_started and one task_notification line, quiet or not:\n%s", p.stdout)
			}
			id, _ := started[0]["task_id"].(string)
			var tagged []map[string]any
			for _, l := range lines(t, p.stdout) {
				if l["parent_tool_use_id"] != nil || l["agent_id"] != nil {
					tagged = append(tagged, l)
				}
			}
			if !verbose {
				if len(tagged) != 0 {
					t.Errorf("%d child lines without --verbose: %v", len(tagged), tagged)
				}
				return
			}
			var step, final bool
			for _, l := range tagged {
				if l["parent_tool_use_id"] != useID || l["agent_id"] != id {
					t.Errorf("child line tagged parent_tool_use_id %v, agent_id %v; want %s, %s", l["parent_tool_use_id"], l["agent_id"], useID, id)
				}
				msg := fmt.Sprint(l["message"])
				step = step || l["type"] == "assistant" && strings.Contains(msg, "CHILD-STEP")
				final = final || l["type"] == "assistant" && strings.Contains(msg, "CHILD-FINAL")
			}
			if !step || !final {
				t.Errorf("child assistant lines: step %v, final %v; want both:\n%s", step, final, p.stdout)
			}
		})
	}
}
