package control

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeConv records what the protocol asked of the session; each message
// sent becomes one result event, so the output shows the turns in order.
type fakeConv struct {
	mu     sync.Mutex
	calls  []string
	events chan cadre.Event
	closed bool
}

func newFakeConv() *fakeConv { return &fakeConv{events: make(chan cadre.Event, 16)} }

func (c *fakeConv) record(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
}

func (c *fakeConv) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func (c *fakeConv) SessionID() string { return "sess-1" }
func (c *fakeConv) Send(_ context.Context, in Input) error {
	c.record("send " + in.Text)
	c.events <- cadre.Event{Type: cadre.EventResult, Subtype: cadre.ResultSuccess, SessionID: "sess-1", Result: &cadre.ResultInfo{Result: "re: " + in.Text}}
	return nil
}
func (c *fakeConv) Events() iter.Seq2[cadre.Event, error] {
	return func(yield func(cadre.Event, error) bool) {
		for ev := range c.events {
			if !yield(ev, nil) {
				return
			}
		}
	}
}
func (c *fakeConv) Interrupt() { c.record("interrupt") }
func (c *fakeConv) SetPermissionMode(m string) error {
	if m == "bogus" {
		return fmt.Errorf("unknown mode %q", m)
	}
	c.record("mode " + m)
	return nil
}
func (c *fakeConv) SetModel(m string) error { c.record("model " + m); return nil }
func (c *fakeConv) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		c.calls = append(c.calls, "close")
		close(c.events)
	}
	return nil
}
func (c *fakeConv) Stop() error { c.record("stop"); return c.Close() }

// harness runs Serve on pipes: the test writes input lines and reads
// output lines as the program would.
type harness struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan map[string]any
	done   chan error
	conv   *fakeConv
	init   chan Init
	peer   chan Peer
	warns  chan string
	cancel context.CancelFunc
}

func start(t *testing.T) *harness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, in: inW, lines: make(chan map[string]any, 64), done: make(chan error, 1), conv: newFakeConv(),
		init: make(chan Init, 1), peer: make(chan Peer, 1), warns: make(chan string, 16), cancel: cancel}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			h.lines <- m
		}
		close(h.lines)
	}()
	go func() {
		err := Serve(ctx, Config{In: inR, Out: outW, Verbose: true,
			Start: func(_ context.Context, init Init, peer Peer) (Conversation, InitInfo, error) {
				h.init <- init
				h.peer <- peer
				return h.conv, InitInfo{Commands: []SlashCommand{{Name: "review", Description: "Review the code"}}, Version: "9.9.9", APIKeySource: "none"}, nil
			},
			Warn: func(s string) { h.warns <- s },
		})
		outW.Close()
		h.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		for range h.lines {
		}
	})
	return h
}

func (h *harness) send(line string) {
	h.t.Helper()
	// Tests wrap long lines for reading; on the wire each is one line.
	line = strings.ReplaceAll(strings.ReplaceAll(line, "\n", " "), "\t", "")
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("write input: %v", err)
	}
}

// next is the next output line, within a deadline.
func (h *harness) next() map[string]any {
	h.t.Helper()
	select {
	case m, ok := <-h.lines:
		if !ok {
			h.t.Fatal("output ended")
		}
		return m
	case <-time.After(10 * time.Second):
		h.t.Fatal("no output line within 10s")
	}
	return nil
}

// end closes the input and returns Serve's error.
func (h *harness) end() error {
	h.t.Helper()
	h.in.Close()
	select {
	case err := <-h.done:
		return err
	case <-time.After(10 * time.Second):
		h.t.Fatal("Serve did not return within 10s of the input's end")
	}
	return nil
}

func response(m map[string]any) (id, subtype string, body map[string]any) {
	r, _ := m["response"].(map[string]any)
	id, _ = r["request_id"].(string)
	subtype, _ = r["subtype"].(string)
	body, _ = r["response"].(map[string]any)
	if subtype == "error" {
		body = map[string]any{"error": r["error"], "error_code": r["error_code"]}
	}
	return id, subtype, body
}

func TestUserMessagesAreTurnsInOrder(t *testing.T) {
	h := start(t)
	h.send(`{"type":"user","message":{"role":"user","content":"one"},"parent_tool_use_id":null,"session_id":""}`)
	h.send(``)
	h.send(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"two"},{"type":"text","text":"lines"}]}}`)
	for _, want := range []string{"re: one", "re: two\nlines"} {
		if m := h.next(); m["type"] != "result" || m["result"] != want {
			t.Fatalf("line = %v, want the result %q", m, want)
		}
	}
	if err := h.end(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if diff := cmp.Diff([]string{"send one", "send two\nlines", "close"}, h.conv.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if init := <-h.init; init.SystemPrompt != nil {
		t.Errorf("without initialize the prompt is cadre's default, got %q", *init.SystemPrompt)
	}
}

func TestInitialize(t *testing.T) {
	h := start(t)
	h.send(`{"type":"control_request","request_id":"i1","request":{"subtype":"initialize","systemPrompt":[""],"appendSystemPrompt":"APPEND",
		"agents":{"checker":{"description":"Checks","prompt":"CHECK","tools":["Read"]}},
		"hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0"],"timeout":5}]},"forwardSubagentText":true}}`)
	id, subtype, body := response(h.next())
	if id != "i1" || subtype != "success" {
		t.Fatalf("initialize answered %s %s %v", id, subtype, body)
	}
	for _, k := range []string{"commands", "agents", "models", "output_style", "available_output_styles", "account", "claude_code_version", "hooks_applied"} {
		if _, ok := body[k]; !ok {
			t.Errorf("initialize response lacks %q: %v", k, body)
		}
	}
	if cmds := body["commands"].([]any); len(cmds) != 1 || cmds[0].(map[string]any)["name"] != "review" {
		t.Errorf("commands = %v", cmds)
	}
	init := <-h.init
	if init.SystemPrompt == nil || *init.SystemPrompt != "" {
		t.Errorf("systemPrompt [\"\"] must ask for the minimal prompt, got %v", init.SystemPrompt)
	}
	want := Init{SystemPrompt: init.SystemPrompt, AppendSystemPrompt: "APPEND", ForwardSubagentText: true,
		Agents: map[string]AgentDefinition{"checker": {Description: "Checks", Prompt: "CHECK", Tools: []string{"Read"}}},
		Hooks:  map[string][]HookMatcher{"PreToolUse": {{Matcher: "Bash", HookCallbackIDs: []string{"hook_0"}, Timeout: 5}}}}
	if diff := cmp.Diff(want, init); diff != "" {
		t.Errorf("Init (-want +got):\n%s", diff)
	}
	// A second initialize is refused: the session already runs with the first.
	h.send(`{"type":"control_request","request_id":"i2","request":{"subtype":"initialize"}}`)
	if id, subtype, _ := response(h.next()); id != "i2" || subtype != "error" {
		t.Errorf("second initialize answered %s %s", id, subtype)
	}
	if err := h.end(); err != nil {
		t.Fatal(err)
	}
}

func TestSystemPromptChoices(t *testing.T) {
	for _, tc := range []struct {
		name, req string
		want      *string
	}{
		{"preset", `{}`, nil},
		{"sdk default", `{"systemPrompt":[""]}`, ptr("")},
		{"custom", `{"systemPrompt":["You are X.","Be brief."]}`, ptr("You are X.\n\nBe brief.")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r initializeRequest
			if err := json.Unmarshal([]byte(tc.req), &r); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, r.init().SystemPrompt); diff != "" {
				t.Errorf("SystemPrompt (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestControlRequests(t *testing.T) {
	h := start(t)
	h.send(`{"type":"control_request","request_id":"i","request":{"subtype":"initialize"}}`)
	h.next()
	for _, tc := range []struct {
		line, id, subtype string
		body              map[string]any
		call              string
	}{
		{`{"type":"control_request","request_id":"a","request":{"subtype":"interrupt"}}`, "a", "success", map[string]any{"still_queued": []any{}}, "interrupt"},
		{`{"type":"control_request","request_id":"b","request":{"subtype":"set_model","model":"haiku"}}`, "b", "success", map[string]any{"model": "haiku"}, "model haiku"},
		{`{"type":"control_request","request_id":"c","request":{"subtype":"set_model","model":null}}`, "c", "success", map[string]any{"model": ""}, "model "},
		{`{"type":"control_request","request_id":"d","request":{"subtype":"set_permission_mode","mode":"bogus"}}`, "d", "error", map[string]any{"error": `unknown mode "bogus"`, "error_code": "invalid_request"}, ""},
		{`{"type":"control_request","request_id":"e","request":{"subtype":"rewind_files","user_message_id":"x"}}`, "e", "success", map[string]any{"canRewind": false, "error": "cadre keeps no file checkpoints: rewinding files is not supported"}, ""},
		// A session without the runtime's Controls (this fake) refuses them by name.
		{`{"type":"control_request","request_id":"g","request":{"subtype":"get_context_usage"}}`, "g", "error", map[string]any{"error": "Unsupported control request subtype: get_context_usage", "error_code": "unsupported_request"}, ""},
		{`{"type":"control_request","request_id":"h","request":{"subtype":"no_such_request"}}`, "h", "error", map[string]any{"error": "Unsupported control request subtype: no_such_request", "error_code": "unsupported_request"}, ""},
		{`{"type":"control_request","request_id":"f","request":{}}`, "f", "error", map[string]any{"error": "control request has no subtype", "error_code": "invalid_request"}, ""},
	} {
		before := len(h.conv.Calls())
		h.send(tc.line)
		id, subtype, body := response(h.next())
		if id != tc.id || subtype != tc.subtype {
			t.Errorf("%s: answered %s %s %v", tc.line, id, subtype, body)
		}
		if diff := cmp.Diff(tc.body, body); diff != "" {
			t.Errorf("%s: response (-want +got):\n%s", tc.line, diff)
		}
		calls := h.conv.Calls()[before:]
		if tc.call == "" && len(calls) != 0 || tc.call != "" && (len(calls) != 1 || calls[0] != tc.call) {
			t.Errorf("%s: session calls %q, want %q", tc.line, calls, tc.call)
		}
	}
	// set_permission_mode: answered, then a status line tells every reader.
	h.send(`{"type":"control_request","request_id":"g","request":{"subtype":"set_permission_mode","mode":"acceptEdits"}}`)
	if id, subtype, body := response(h.next()); id != "g" || subtype != "success" || body["mode"] != "acceptEdits" {
		t.Errorf("set_permission_mode answered %s %s %v", id, subtype, body)
	}
	if m := h.next(); m["type"] != "system" || m["subtype"] != "status" || m["permissionMode"] != "acceptEdits" || m["session_id"] != "sess-1" {
		t.Errorf("after set_permission_mode: %v, want a system/status line", m)
	}
	if err := h.end(); err != nil {
		t.Fatal(err)
	}
}

func TestUnreadableLineEndsInput(t *testing.T) {
	for _, tc := range []struct{ name, line, want string }{
		{"not json", `{"type":"user",`, "stream-json input line 2 is not JSON"},
		{"no type", `{"message":{}}`, `stream-json input line 2 has no "type"`},
		{"bad content", `{"type":"user","message":{"role":"user","content":42}}`, "stream-json input line 2: user message content is neither"},
		{"tool_result block", `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}}`, `stream-json input line 2: user message content block 0 has type "tool_result"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t)
			h.send(`{"type":"user","message":{"role":"user","content":"first"}}`)
			h.send(tc.line)
			// The turn already given still runs and reaches the program.
			if m := h.next(); m["result"] != "re: first" {
				t.Errorf("line = %v, want the first turn's result", m)
			}
			err := h.end()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Serve = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestUnknownLineTypeIsIgnored(t *testing.T) {
	h := start(t)
	h.send(`{"type":"bogus"}`)
	h.send(`{"type":"keep_alive"}`)
	h.send(`{"type":"user","message":{"role":"user","content":"hi"}}`)
	if m := h.next(); m["result"] != "re: hi" {
		t.Errorf("line = %v", m)
	}
	if w := <-h.warns; !strings.Contains(w, `line 1: ignoring a line of type "bogus"`) {
		t.Errorf("warning = %q", w)
	}
	if err := h.end(); err != nil {
		t.Fatal(err)
	}
}

func TestNoInput(t *testing.T) {
	h := start(t)
	if err := h.end(); err == nil || !strings.Contains(err.Error(), "before any user message") {
		t.Fatalf("Serve = %v", err)
	}
}

// ask runs peer.Ask in the background and returns where its outcome goes.
type asked struct {
	Ans Answer
	Err error
}

func ask(p Peer, a Ask) chan asked {
	ch := make(chan asked, 1)
	go func() {
		ans, err := p.Ask(context.Background(), a)
		ch <- asked{Ans: ans, Err: err}
	}()
	return ch
}

func TestCanUseToolMatchedByRequestID(t *testing.T) {
	h := start(t)
	h.send(`{"type":"control_request","request_id":"i","request":{"subtype":"initialize"}}`)
	h.next()
	<-h.init
	peer := <-h.peer
	bash := ask(peer, Ask{Tool: "Bash", Input: json.RawMessage(`{"command":"rm -rf build"}`), ToolUseID: "toolu_1", Description: "Clean", Suggestions: []string{"Bash(rm -rf build)"}})
	first := h.next()
	write := ask(peer, Ask{Tool: "Write", Input: json.RawMessage(`{"file_path":"/w/a.txt"}`), ToolUseID: "toolu_2", BlockedPath: "/w/a.txt",
		Agent: "reviewer", AgentID: "agent-7", ParentToolUseID: "toolu_agent", Diff: "--- /dev/null\n+++ /w/a.txt\n@@ -0,0 +1 @@\n+a\n"})
	second := h.next()
	// Requests sent: check the wire shape of the child's, which names its agent.
	req := second["request"].(map[string]any)
	if first["request"].(map[string]any)["tool_name"] != "Bash" {
		first, second = second, first
		req = second["request"].(map[string]any)
	}
	wantReq := map[string]any{"subtype": "can_use_tool", "tool_name": "Write", "display_name": "Write", "input": map[string]any{"file_path": "/w/a.txt"},
		"blocked_path": "/w/a.txt", "tool_use_id": "toolu_2", "agent_id": "agent-7", "parent_tool_use_id": "toolu_agent", "agent_type": "reviewer",
		"diff": "--- /dev/null\n+++ /w/a.txt\n@@ -0,0 +1 @@\n+a\n"}
	if diff := cmp.Diff(wantReq, req); diff != "" {
		t.Errorf("child's can_use_tool (-want +got):\n%s", diff)
	}
	sugg := first["request"].(map[string]any)["permission_suggestions"]
	wantSugg := []any{map[string]any{"type": "addRules", "behavior": "allow", "destination": "session", "rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "rm -rf build"}}}}
	if diff := cmp.Diff(wantSugg, sugg); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
	// Answer the second first: each answer reaches its own question.
	h.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":"deny","message":"not there","interrupt":true}}}`, second["request_id"]))
	h.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":"allow","updatedInput":{"command":"rm -rf ./build"},
		"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"rm -rf ./build"}],"behavior":"allow","destination":"session"}],"toolUseID":"toolu_1"}}}`, first["request_id"]))
	got := <-write
	if diff := cmp.Diff(asked{Ans: Answer{Message: "not there", Interrupt: true}}, got); diff != "" {
		t.Errorf("Write answer (-want +got):\n%s", diff)
	}
	got = <-bash
	want := Answer{Allow: true, UpdatedInput: json.RawMessage(`{"command":"rm -rf ./build"}`), Remember: []string{"Bash(rm -rf ./build)"}}
	if diff := cmp.Diff(asked{Ans: want}, got); diff != "" {
		t.Errorf("Bash answer (-want +got):\n%s", diff)
	}
	// An error response, and an answer that is not a PermissionResult, are errors.
	bad := ask(peer, Ask{Tool: "Edit", ToolUseID: "toolu_3"})
	m := h.next()
	h.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"error","request_id":%q,"error":"canUseTool callback is not provided."}}`, m["request_id"]))
	if got := <-bad; got.Err == nil || !strings.Contains(got.Err.Error(), "canUseTool callback is not provided") {
		t.Errorf("error response: %v", got.Err)
	}
	bad = ask(peer, Ask{Tool: "Edit", ToolUseID: "toolu_4"})
	m = h.next()
	h.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":"maybe"}}}`, m["request_id"]))
	if got := <-bad; got.Err == nil || !strings.Contains(got.Err.Error(), `behavior "maybe"`) {
		t.Errorf("bad behavior: %v", got.Err)
	}
	if err := h.end(); err != nil {
		t.Fatal(err)
	}
}

func TestInputEndDeniesPendingAsk(t *testing.T) {
	h := start(t)
	h.send(`{"type":"control_request","request_id":"i","request":{"subtype":"initialize"}}`)
	h.next()
	peer := <-h.peer
	pending := ask(peer, Ask{Tool: "Bash", ToolUseID: "toolu_1"})
	if m := h.next(); m["type"] != "control_request" {
		t.Fatalf("line = %v", m)
	}
	if err := h.end(); err != nil {
		t.Fatal(err)
	}
	got := <-pending
	if got.Err != nil || got.Ans.Allow || got.Ans.Message != ErrInputEnded.Error() {
		t.Errorf("pending ask after the input ended = %+v, want a denial", got)
	}
	// And one asked afterwards is denied at once.
	if ans, err := peer.Ask(context.Background(), Ask{Tool: "Bash"}); err != nil || ans.Allow {
		t.Errorf("ask after the end = %+v, %v", ans, err)
	}
}

func TestHookCallback(t *testing.T) {
	h := start(t)
	h.send(`{"type":"control_request","request_id":"i","request":{"subtype":"initialize"}}`)
	h.next()
	peer := <-h.peer
	out := make(chan json.RawMessage, 1)
	go func() {
		raw, err := peer.Hook(context.Background(), "hook_0", json.RawMessage(`{"hook_event_name":"PreToolUse","tool_name":"Bash"}`), "toolu_1")
		if err != nil {
			t.Error(err)
		}
		out <- raw
	}()
	m := h.next()
	wantReq := map[string]any{"subtype": "hook_callback", "callback_id": "hook_0", "input": map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash"}, "tool_use_id": "toolu_1"}
	if diff := cmp.Diff(wantReq, m["request"]); diff != "" {
		t.Errorf("hook_callback (-want +got):\n%s", diff)
	}
	h.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"decision":"block","reason":"no"}}}`, m["request_id"]))
	if got := string(<-out); got != `{"decision":"block","reason":"no"}` {
		t.Errorf("hook output = %s", got)
	}
	if err := h.end(); err != nil {
		t.Fatal(err)
	}
}

func TestCancelStopsSession(t *testing.T) {
	h := start(t)
	h.send(`{"type":"user","message":{"role":"user","content":"hi"}}`)
	h.next()
	h.cancel()
	select {
	case err := <-h.done:
		if err != context.Canceled {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if calls := h.conv.Calls(); calls[len(calls)-2] != "stop" {
		t.Errorf("calls = %q, want the session stopped", calls)
	}
}

func TestForwardSubagentText(t *testing.T) {
	text := llm.Block{Type: llm.BlockText, Text: "thinking aloud"}
	think := llm.Block{Type: llm.BlockThinking, Thinking: "hmm"}
	use := llm.Block{Type: llm.BlockToolUse, ID: "t1", Name: "Read"}
	res := llm.Block{Type: llm.BlockToolResult, ToolUseID: "t1"}
	ev := func(typ cadre.EventType, parent string, blocks ...llm.Block) cadre.Event {
		return cadre.Event{Type: typ, ParentToolUseID: parent, Message: &llm.Message{Content: blocks}}
	}
	for _, tc := range []struct {
		name    string
		in      cadre.Event
		forward bool
		want    []llm.Block // nil: not written
	}{
		{"main agent untouched", ev(cadre.EventAssistant, "", text, think, use), false, []llm.Block{text, think, use}},
		{"child tool call keeps only the call", ev(cadre.EventAssistant, "a1", text, think, use), false, []llm.Block{use}},
		{"child tool result kept", ev(cadre.EventUser, "a1", res), false, []llm.Block{res}},
		{"child prompt dropped", ev(cadre.EventUser, "a1", text), false, nil},
		{"child final answer kept, thinking dropped", ev(cadre.EventAssistant, "a1", think, text), false, []llm.Block{text}},
		{"forwardSubagentText keeps all", ev(cadre.EventAssistant, "a1", text, think, use), true, []llm.Block{text, think, use}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := forwarded(tc.in, tc.forward)
			if tc.want == nil {
				if ok {
					t.Errorf("written: %v", got.Message.Content)
				}
				return
			}
			if !ok {
				t.Fatal("not written")
			}
			if diff := cmp.Diff(tc.want, got.Message.Content); diff != "" {
				t.Errorf("blocks (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCanUseToolSuggestsAndAppliesUpdates: the suggestions take Claude
// Code's shapes, and each kind of update in an answer goes where it
// belongs: session rules to Remember, saved rules to Save, a session mode
// to the conversation, the rest named in a warning.
func TestCanUseToolSuggestsAndAppliesUpdates(t *testing.T) {
	h := start(t)
	h.send(`{"type":"control_request","request_id":"i","request":{"subtype":"initialize"}}`)
	h.next()
	<-h.init
	peer := <-h.peer
	got := ask(peer, Ask{Tool: "Bash", Input: json.RawMessage(`{"command":"touch a && echo ok"}`), ToolUseID: "toolu_1",
		Suggestions: []string{"Bash(touch:*)", "Bash(echo:*)"}, ExactRules: []string{"Bash(touch a)", "Bash(echo ok)"}, Edits: true})
	m := h.next()
	wantSugg := []any{
		map[string]any{"type": "addRules", "behavior": "allow", "destination": "localSettings", "rules": []any{
			map[string]any{"toolName": "Bash", "ruleContent": "touch a"}, map[string]any{"toolName": "Bash", "ruleContent": "echo ok"}}},
		map[string]any{"type": "setMode", "mode": "acceptEdits", "destination": "session"},
	}
	if diff := cmp.Diff(wantSugg, m["request"].(map[string]any)["permission_suggestions"]); diff != "" {
		t.Errorf("suggestions (-want +got):\n%s", diff)
	}
	h.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":"allow","updatedPermissions":[
		{"type":"addRules","rules":[{"toolName":"Read"}],"behavior":"allow","destination":"session"},
		{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch a"}],"behavior":"allow","destination":"localSettings"},
		{"type":"addRules","rules":[{"toolName":"WebFetch"}],"behavior":"deny","destination":"userSettings"},
		{"type":"addRules","rules":[{"toolName":"Bash"}],"behavior":"allow","destination":"projectSettings"},
		{"type":"setMode","mode":"acceptEdits","destination":"session"},
		{"type":"addDirectories","directories":["/elsewhere"],"destination":"session"}]}}}`, m["request_id"]))
	want := Answer{Allow: true, Remember: []string{"Read"}, Save: []cadre.RuleUpdate{
		{Destination: cadre.RulesLocal, Behavior: "allow", Rules: []string{"Bash(touch a)"}},
		{Destination: cadre.RulesUser, Behavior: "deny", Rules: []string{"WebFetch"}},
		{Destination: cadre.RulesProject, Behavior: "allow", Rules: []string{"Bash"}},
	}, Mode: "acceptEdits", Ignored: []string{"addDirectories (session)"}}
	if diff := cmp.Diff(asked{Ans: want}, <-got); diff != "" {
		t.Errorf("answer (-want +got):\n%s", diff)
	}
	if calls := h.conv.Calls(); !slices.Contains(calls, "mode acceptEdits") {
		t.Errorf("conversation calls %v: the session mode was not set", calls)
	}
	select {
	case w := <-h.warns:
		if !strings.Contains(w, "addDirectories") {
			t.Errorf("warning %q does not name the update not applied", w)
		}
	default:
		t.Errorf("no warning about the addDirectories update")
	}
	if err := h.end(); err != nil {
		t.Fatal(err)
	}
}
