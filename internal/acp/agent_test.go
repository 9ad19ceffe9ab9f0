package acp

import (
	"context"
	"errors"
	"io"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	acpsdk "github.com/coder/acp-go-sdk"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait of these tests: a hang fails, it never sleeps.
const wait = 10 * time.Second

// fakeBackend opens fakeConvs and hands each to the test.
type fakeBackend struct {
	images   bool
	mode     cadre.PermissionMode
	commands []string
	history  map[string][]cadre.Event
	opened   chan *fakeConv
}

func (b *fakeBackend) Images() bool { return b.images }

func (b *fakeBackend) Open(ctx context.Context, req OpenRequest) (Conversation, error) {
	c := &fakeConv{id: "sess-new", req: req, sent: make(chan Message, 4), events: make(chan cadre.Event, 64), interrupted: make(chan struct{}, 4), modes: make(chan string, 4), stopped: make(chan struct{})}
	if req.Resume != "" {
		c.id = req.Resume
	}
	mode := b.mode
	if mode == "" {
		mode = "default"
	}
	c.events <- cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeInit, Init: &cadre.InitInfo{PermissionMode: mode, SlashCommands: b.commands}}
	b.opened <- c
	return c, nil
}

func (b *fakeBackend) History(ctx context.Context, cwd, mcpConfig, id string) ([]cadre.Event, error) {
	h, ok := b.history[id]
	if !ok {
		return nil, errors.New("no such session")
	}
	return h, nil
}

// fakeConv is a conversation the test plays: it sees what was sent and
// emits the events the test pushes.
type fakeConv struct {
	id          string
	req         OpenRequest
	sent        chan Message
	events      chan cadre.Event
	interrupted chan struct{}
	modes       chan string
	stopOnce    sync.Once
	stopped     chan struct{}
}

func (c *fakeConv) SessionID() string { return c.id }
func (c *fakeConv) Send(ctx context.Context, m Message) error {
	c.sent <- m
	return nil
}
func (c *fakeConv) Events() iter.Seq2[cadre.Event, error] {
	return func(yield func(cadre.Event, error) bool) {
		for {
			select {
			case e := <-c.events:
				if !yield(e, nil) {
					return
				}
			case <-c.stopped:
				return
			}
		}
	}
}
func (c *fakeConv) Interrupt() { c.interrupted <- struct{}{} }
func (c *fakeConv) SetPermissionMode(mode string) error {
	if mode == "sideways" {
		return errors.New("unknown permission mode sideways")
	}
	c.modes <- mode
	return nil
}
func (c *fakeConv) Stop() error {
	c.stopOnce.Do(func() { close(c.stopped) })
	return nil
}

// testClient is the editor: it records updates and answers permission
// requests with the option its choose function picks.
type testClient struct {
	mu       sync.Mutex
	updates  []acpsdk.SessionUpdate
	requests []acpsdk.RequestPermissionRequest
	choose   func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionOutcome
	// changed gets a signal after each update.
	changed chan struct{}
}

func (c *testClient) SessionUpdate(ctx context.Context, n acpsdk.SessionNotification) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.updates = append(c.updates, n.Update)
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

// await waits until the updates seen satisfy ok.
func (c *testClient) await(t *testing.T, what string, ok func([]acpsdk.SessionUpdate) bool) []acpsdk.SessionUpdate {
	t.Helper()
	deadline := time.After(wait)
	for {
		ups := c.seen()
		if ok(ups) {
			return ups
		}
		select {
		case <-c.changed:
		case <-deadline:
			t.Fatalf("%s: not seen in %+v", what, ups)
		}
	}
}

func (c *testClient) RequestPermission(ctx context.Context, r acpsdk.RequestPermissionRequest) (acpsdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.requests = append(c.requests, r)
	choose := c.choose
	c.mu.Unlock()
	return acpsdk.RequestPermissionResponse{Outcome: choose(r)}, nil
}

func (c *testClient) seen() []acpsdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]acpsdk.SessionUpdate(nil), c.updates...)
}

func (c *testClient) ReadTextFile(context.Context, acpsdk.ReadTextFileRequest) (acpsdk.ReadTextFileResponse, error) {
	return acpsdk.ReadTextFileResponse{}, errors.New("not offered")
}
func (c *testClient) WriteTextFile(context.Context, acpsdk.WriteTextFileRequest) (acpsdk.WriteTextFileResponse, error) {
	return acpsdk.WriteTextFileResponse{}, errors.New("not offered")
}
func (c *testClient) CreateTerminal(context.Context, acpsdk.CreateTerminalRequest) (acpsdk.CreateTerminalResponse, error) {
	return acpsdk.CreateTerminalResponse{}, errors.New("not offered")
}
func (c *testClient) KillTerminal(context.Context, acpsdk.KillTerminalRequest) (acpsdk.KillTerminalResponse, error) {
	return acpsdk.KillTerminalResponse{}, errors.New("not offered")
}
func (c *testClient) TerminalOutput(context.Context, acpsdk.TerminalOutputRequest) (acpsdk.TerminalOutputResponse, error) {
	return acpsdk.TerminalOutputResponse{}, errors.New("not offered")
}
func (c *testClient) ReleaseTerminal(context.Context, acpsdk.ReleaseTerminalRequest) (acpsdk.ReleaseTerminalResponse, error) {
	return acpsdk.ReleaseTerminalResponse{}, errors.New("not offered")
}
func (c *testClient) WaitForTerminalExit(context.Context, acpsdk.WaitForTerminalExitRequest) (acpsdk.WaitForTerminalExitResponse, error) {
	return acpsdk.WaitForTerminalExitResponse{}, errors.New("not offered")
}

// harness connects a Go ACP client to Serve over pipes.
type harness struct {
	t       *testing.T
	backend *fakeBackend
	client  *testClient
	conn    *acpsdk.ClientSideConnection
	ctx     context.Context
}

func start(t *testing.T, b *fakeBackend) *harness {
	t.Helper()
	if b.opened == nil {
		b.opened = make(chan *fakeConv, 4)
	}
	toAgent, fromClient := io.Pipe()
	toClient, fromAgent := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- Serve(context.Background(), Config{Backend: b, In: toAgent, Out: fromAgent}) }()
	h := &harness{t: t, backend: b, client: &testClient{changed: make(chan struct{}, 1)}}
	in := &gated{r: toClient, open: make(chan struct{})}
	h.conn = acpsdk.NewClientSideConnection(h.client, fromClient, in)
	h.conn.SetLogger(slog.New(slog.DiscardHandler))
	close(in.open)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	h.ctx = ctx
	t.Cleanup(func() {
		fromClient.Close() // the editor goes away: Serve stops its sessions
		select {
		case err := <-served:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(wait):
			t.Errorf("Serve did not return after the client closed its end")
		}
		fromAgent.Close()
		<-h.conn.Done()
		cancel()
	})
	return h
}

func (h *harness) newSession() (acpsdk.SessionId, *fakeConv) {
	h.t.Helper()
	resp, err := h.conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: "/work/project", McpServers: []acpsdk.McpServer{}})
	if err != nil {
		h.t.Fatalf("session/new: %v", err)
	}
	return resp.SessionId, h.opened()
}

func (h *harness) opened() *fakeConv {
	h.t.Helper()
	select {
	case c := <-h.backend.opened:
		return c
	case <-time.After(wait):
		h.t.Fatal("no conversation was opened")
		return nil
	}
}

// prompt sends a prompt in the background and returns its outcome's channel.
func (h *harness) prompt(id acpsdk.SessionId, blocks ...acpsdk.ContentBlock) <-chan promptOutcome {
	out := make(chan promptOutcome, 1)
	go func() {
		r, err := h.conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: id, Prompt: blocks})
		out <- promptOutcome{r, err}
	}()
	return out
}

type promptOutcome struct {
	resp acpsdk.PromptResponse
	err  error
}

func (h *harness) outcome(ch <-chan promptOutcome) promptOutcome {
	h.t.Helper()
	select {
	case o := <-ch:
		return o
	case <-time.After(wait):
		h.t.Fatal("the prompt was not answered")
		return promptOutcome{}
	}
}

func received[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("%s did not happen", what)
		var zero T
		return zero
	}
}

func result(subtype string, r cadre.ResultInfo) cadre.Event {
	return cadre.Event{Type: cadre.EventResult, Subtype: subtype, Result: &r}
}

func TestInitialize(t *testing.T) {
	for _, images := range []bool{false, true} {
		h := start(t, &fakeBackend{images: images})
		resp, err := h.conn.Initialize(h.ctx, acpsdk.InitializeRequest{ProtocolVersion: acpsdk.ProtocolVersionNumber})
		if err != nil {
			t.Fatal(err)
		}
		caps := resp.AgentCapabilities
		if resp.ProtocolVersion != acpsdk.ProtocolVersionNumber || !caps.LoadSession || !caps.PromptCapabilities.EmbeddedContext ||
			caps.PromptCapabilities.Audio || caps.PromptCapabilities.Image != images || !caps.McpCapabilities.Http || !caps.McpCapabilities.Sse || caps.McpCapabilities.Acp {
			t.Errorf("initialize with images=%v answered %+v", images, resp)
		}
		if resp.AgentInfo == nil || resp.AgentInfo.Name != "cadre" || resp.AgentInfo.Version != cadre.Version() {
			t.Errorf("agentInfo = %+v", resp.AgentInfo)
		}
	}
}

func TestPromptStreamsUpdatesAndEnds(t *testing.T) {
	h := start(t, &fakeBackend{})
	id, conv := h.newSession()
	if id != "sess-new" || conv.req.Cwd != "/work/project" || conv.req.Resume != "" {
		t.Fatalf("session/new gave %q for %+v", id, conv.req)
	}
	done := h.prompt(id, acpsdk.TextBlock("What is in notes.txt?"), acpsdk.ResourceLinkBlock("notes.txt", "file:///work/project/notes.txt"))
	m := received(t, conv.sent, "the prompt's message")
	if want := "What is in notes.txt?\n\nReferenced: /work/project/notes.txt"; m.Text != want {
		t.Errorf("message = %q, want %q", m.Text, want)
	}
	conv.events <- assistant("", use("toolu_1", "Read", `{"file_path":"notes.txt"}`))
	conv.events <- user("", nil, llm.ToolResult("toolu_1", "PAPAYA", false))
	conv.events <- assistant("", llm.Text("The secret word is PAPAYA."))
	conv.events <- result(cadre.ResultSuccess, cadre.ResultInfo{Result: "The secret word is PAPAYA.", StopReason: llm.StopEndTurn})
	o := h.outcome(done)
	if o.err != nil || o.resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", o.resp, o.err)
	}
	var kinds []string
	for _, u := range h.client.seen() {
		switch {
		case u.ToolCall != nil:
			kinds = append(kinds, "tool_call "+string(u.ToolCall.Status))
		case u.ToolCallUpdate != nil:
			kinds = append(kinds, "tool_call_update "+string(*u.ToolCallUpdate.Status))
		case u.AgentMessageChunk != nil:
			kinds = append(kinds, "message "+u.AgentMessageChunk.Content.Text.Text)
		}
	}
	want := "tool_call pending|tool_call_update completed|message The secret word is PAPAYA."
	if got := strings.Join(kinds, "|"); got != want {
		t.Errorf("updates before the prompt's answer:\n got %s\nwant %s", got, want)
	}
}

func TestStopReasons(t *testing.T) {
	tests := []struct {
		name    string
		ev      cadre.Event
		want    acpsdk.StopReason
		wantErr string
	}{
		{"end_turn", result(cadre.ResultSuccess, cadre.ResultInfo{StopReason: llm.StopEndTurn}), acpsdk.StopReasonEndTurn, ""},
		{"max_turns", result(cadre.ResultMaxTurns, cadre.ResultInfo{IsError: true}), acpsdk.StopReasonMaxTurnRequests, ""},
		{"refusal", result(cadre.ResultSuccess, cadre.ResultInfo{StopReason: llm.StopRefusal}), acpsdk.StopReasonRefusal, ""},
		{"max_tokens", result(cadre.ResultSuccess, cadre.ResultInfo{StopReason: llm.StopMaxTokens}), acpsdk.StopReasonMaxTokens, ""},
		{"failure", result(cadre.ResultDuringExecution, cadre.ResultInfo{IsError: true, Errors: []string{"anthropic: 529 overloaded"}}), "", "529 overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, &fakeBackend{})
			id, conv := h.newSession()
			done := h.prompt(id, acpsdk.TextBlock("go"))
			received(t, conv.sent, "the message")
			conv.events <- tt.ev
			o := h.outcome(done)
			if tt.wantErr != "" {
				if o.err == nil || !strings.Contains(o.err.Error(), tt.wantErr) {
					t.Fatalf("prompt = %+v, %v; want an error saying %q", o.resp, o.err, tt.wantErr)
				}
				return
			}
			if o.err != nil || o.resp.StopReason != tt.want {
				t.Fatalf("prompt = %+v, %v; want %s", o.resp, o.err, tt.want)
			}
		})
	}
}

// A turn nobody prompted (a background run's notification turn) streams
// as updates, and its failure is told as a message.
func TestUnpromptedTurnStreams(t *testing.T) {
	h := start(t, &fakeBackend{})
	_, conv := h.newSession()
	conv.events <- assistant("", llm.Text("The background review is done."))
	conv.events <- result(cadre.ResultDuringExecution, cadre.ResultInfo{IsError: true, Errors: []string{"boom"}})
	h.client.await(t, "the failure message", func(ups []acpsdk.SessionUpdate) bool { return len(ups) == 2 })
	// A prompt after it is answered by its own turn.
	id := acpsdk.SessionId(conv.id)
	done := h.prompt(id, acpsdk.TextBlock("thanks"))
	received(t, conv.sent, "the message")
	conv.events <- result(cadre.ResultSuccess, cadre.ResultInfo{})
	if o := h.outcome(done); o.err != nil || o.resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("prompt = %+v, %v", o.resp, o.err)
	}
	var texts []string
	for _, u := range h.client.seen() {
		if u.AgentMessageChunk != nil {
			texts = append(texts, u.AgentMessageChunk.Content.Text.Text)
		}
	}
	if got, want := strings.Join(texts, "|"), "The background review is done.|cadre: boom"; got != want {
		t.Errorf("messages = %q, want %q", got, want)
	}
}

// A prompt sent while a turn nobody prompted runs (a background run's
// notification turn) is answered by its own turn's result, which comes
// after that turn's.
func TestPromptDuringAnUnpromptedTurn(t *testing.T) {
	h := start(t, &fakeBackend{})
	id, conv := h.newSession()
	conv.events <- assistant("", llm.Text("Working on the notification."))
	h.client.await(t, "the notification turn's message", func(ups []acpsdk.SessionUpdate) bool { return len(ups) == 1 })
	done := h.prompt(id, acpsdk.TextBlock("hello"))
	received(t, conv.sent, "the message")
	conv.events <- result(cadre.ResultSuccess, cadre.ResultInfo{Result: "notification handled"})
	conv.events <- assistant("", llm.Text("Hello!"))
	select {
	case o := <-done:
		t.Fatalf("the prompt was answered by the notification turn's result: %+v", o)
	default:
	}
	conv.events <- result(cadre.ResultMaxTurns, cadre.ResultInfo{IsError: true})
	if o := h.outcome(done); o.err != nil || o.resp.StopReason != acpsdk.StopReasonMaxTurnRequests {
		t.Fatalf("prompt = %+v, %v; want its own turn's max_turn_requests", o.resp, o.err)
	}
}

func TestCancelInterruptsTheTurn(t *testing.T) {
	h := start(t, &fakeBackend{})
	id, conv := h.newSession()
	done := h.prompt(id, acpsdk.TextBlock("run the slow thing"))
	received(t, conv.sent, "the message")
	conv.events <- assistant("", use("toolu_s", "Bash", `{"command":"sleep 100"}`))
	if err := h.conn.Cancel(h.ctx, acpsdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	received(t, conv.interrupted, "the interrupt")
	conv.events <- user("", nil, llm.ToolResult("toolu_s", "Interrupted: the run was stopped while Bash was running.", true))
	conv.events <- result(cadre.ResultDuringExecution, cadre.ResultInfo{IsError: true, Errors: []string{"the run was interrupted"}})
	if o := h.outcome(done); o.err != nil || o.resp.StopReason != acpsdk.StopReasonCancelled {
		t.Fatalf("prompt = %+v, %v; want cancelled", o.resp, o.err)
	}
	// The conversation goes on: the next prompt runs.
	done = h.prompt(id, acpsdk.TextBlock("again"))
	received(t, conv.sent, "the second message")
	conv.events <- result(cadre.ResultSuccess, cadre.ResultInfo{})
	if o := h.outcome(done); o.err != nil || o.resp.StopReason != acpsdk.StopReasonEndTurn {
		t.Fatalf("second prompt = %+v, %v", o.resp, o.err)
	}
}

func TestPermissionRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		ask     Ask
		pick    acpsdk.RequestPermissionOutcome
		options []string
		title   string
		want    Answer
	}{
		{
			name: "main_allow_once", ask: Ask{Tool: "Bash", Input: []byte(`{"command":"npm test"}`), ToolUseID: "toolu_1", Agent: "main", Suggestions: []string{"Bash(npm test:*)"}},
			pick: acpsdk.NewRequestPermissionOutcomeSelected(optAllow), options: []string{"allow", "allow_always", "reject"},
			title: "main: Run `npm test`", want: Answer{Allow: true},
		},
		{
			name: "subagent_allow_always", ask: Ask{Tool: "Edit", Input: []byte(`{"file_path":"/work/project/a.go","old_string":"a","new_string":"b"}`), ToolUseID: "toolu_2", Agent: "reviewer", AgentID: "child", ParentToolUseID: "toolu_agent", Suggestions: []string{"Edit(/work/project/**)"}},
			pick: acpsdk.NewRequestPermissionOutcomeSelected(optAllowAlways), options: []string{"allow", "allow_always", "reject"},
			title: "reviewer: Edit a.go", want: Answer{Allow: true, Remember: []string{"Edit(/work/project/**)"}},
		},
		{
			name: "reject_without_suggestions", ask: Ask{Tool: "WebFetch", Input: []byte(`{"url":"https://x"}`), ToolUseID: "toolu_3", Agent: "main"},
			pick: acpsdk.NewRequestPermissionOutcomeSelected(optReject), options: []string{"allow", "reject"},
			title: "main: WebFetch `https://x`", want: Answer{},
		},
		{
			name: "cancelled", ask: Ask{Tool: "Bash", Input: []byte(`{"command":"ls"}`), ToolUseID: "toolu_4", Agent: "main"},
			pick: acpsdk.NewRequestPermissionOutcomeCancelled(), options: []string{"allow", "reject"},
			title: "main: Run `ls`", want: Answer{Message: "The user cancelled the turn before answering."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, &fakeBackend{})
			h.client.choose = func(acpsdk.RequestPermissionRequest) acpsdk.RequestPermissionOutcome { return tt.pick }
			id, conv := h.newSession()
			got, err := conv.req.Ask(h.ctx, tt.ask)
			if err != nil {
				t.Fatal(err)
			}
			if got.Allow != tt.want.Allow || got.Message != tt.want.Message || strings.Join(got.Remember, ",") != strings.Join(tt.want.Remember, ",") {
				t.Errorf("answer = %+v, want %+v", got, tt.want)
			}
			req := h.client.requests[0]
			var opts []string
			for _, o := range req.Options {
				opts = append(opts, string(o.OptionId))
			}
			if req.SessionId != id || *req.ToolCall.Title != tt.title || string(req.ToolCall.ToolCallId) != tt.ask.ToolUseID || strings.Join(opts, ",") != strings.Join(tt.options, ",") {
				t.Errorf("request = session %s, title %q, call %s, options %v", req.SessionId, *req.ToolCall.Title, req.ToolCall.ToolCallId, opts)
			}
			// The call was announced before the question, and runs once
			// allowed: a marker call's announcement after it shows the
			// order is complete.
			conv.events <- assistant("", use("toolu_marker", "LS", `{}`))
			ups := h.client.await(t, "the marker", func(ups []acpsdk.SessionUpdate) bool {
				if len(ups) == 0 {
					return false
				}
				l := ups[len(ups)-1]
				return l.ToolCall != nil && l.ToolCall.ToolCallId == "toolu_marker"
			})
			if ups[0].ToolCall == nil || string(ups[0].ToolCall.ToolCallId) != tt.ask.ToolUseID {
				t.Fatalf("first update = %+v, want the call's announcement", ups[0])
			}
			last := ups[len(ups)-2]
			running := last.ToolCallUpdate != nil && last.ToolCallUpdate.Status != nil && *last.ToolCallUpdate.Status == acpsdk.ToolCallStatusInProgress
			if running != tt.want.Allow || len(ups) != map[bool]int{true: 3, false: 2}[tt.want.Allow] {
				t.Errorf("updates = %+v; in_progress expected only when allowed", ups)
			}
		})
	}
}

func TestLoadSessionReplaysHistory(t *testing.T) {
	history := []cadre.Event{
		{Type: cadre.EventUser, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text("hello")}}},
		{Type: cadre.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("hi there")}}},
	}
	h := start(t, &fakeBackend{history: map[string][]cadre.Event{"sess-old": history}})
	if _, err := h.conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: "sess-old", Cwd: "/work/project", McpServers: []acpsdk.McpServer{}}); err != nil {
		t.Fatal(err)
	}
	conv := h.opened()
	if conv.req.Resume != "sess-old" {
		t.Errorf("load opened %+v, want a resume of sess-old", conv.req)
	}
	ups := h.client.seen()
	if len(ups) != 2 || ups[0].UserMessageChunk == nil || ups[0].UserMessageChunk.Content.Text.Text != "hello" ||
		ups[1].AgentMessageChunk == nil || ups[1].AgentMessageChunk.Content.Text.Text != "hi there" {
		t.Errorf("replayed updates = %+v", ups)
	}
	// The loaded session takes prompts under its old id.
	done := h.prompt("sess-old", acpsdk.TextBlock("and now?"))
	received(t, conv.sent, "the message")
	conv.events <- result(cadre.ResultSuccess, cadre.ResultInfo{})
	if o := h.outcome(done); o.err != nil {
		t.Fatal(o.err)
	}
	if _, err := h.conn.LoadSession(h.ctx, acpsdk.LoadSessionRequest{SessionId: "nope", Cwd: "/work/project", McpServers: []acpsdk.McpServer{}}); err == nil {
		t.Error("loading an unknown session succeeded")
	}
}

// The editor's MCP servers reach the conversation as an --mcp-config
// document; a list cadre cannot take is refused.
func TestSessionMCPServers(t *testing.T) {
	h := start(t, &fakeBackend{})
	servers := []acpsdk.McpServer{{Stdio: &acpsdk.McpServerStdio{Name: "files", Command: "mcp-files", Args: []string{}, Env: []acpsdk.EnvVariable{}}}}
	if _, err := h.conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: "/work/project", McpServers: servers}); err != nil {
		t.Fatal(err)
	}
	if got, want := h.opened().req.MCPConfig, `{"mcpServers":{"files":{"type":"stdio","command":"mcp-files"}}}`; got != want {
		t.Errorf("MCPConfig = %s, want %s", got, want)
	}
	if _, err := h.conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: "/work/project", McpServers: append(servers, servers...)}); err == nil {
		t.Error("a server given twice was accepted")
	}
}

func TestBadRequests(t *testing.T) {
	h := start(t, &fakeBackend{})
	if _, err := h.conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: "relative/dir", McpServers: []acpsdk.McpServer{}}); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("a relative cwd gave %v", err)
	}
	if _, err := h.conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: "ghost", Prompt: []acpsdk.ContentBlock{acpsdk.TextBlock("hi")}}); err == nil {
		t.Error("a prompt to an unknown session succeeded")
	}
	id, _ := h.newSession()
	for name, block := range map[string]acpsdk.ContentBlock{
		"audio": acpsdk.AudioBlock("AAAA", "audio/wav"),
		"image": acpsdk.ImageBlock("AAAA", "image/png"), // the backend takes no images
		"empty": acpsdk.TextBlock("  "),
	} {
		if _, err := h.conn.Prompt(h.ctx, acpsdk.PromptRequest{SessionId: id, Prompt: []acpsdk.ContentBlock{block}}); err == nil {
			t.Errorf("a prompt of %s succeeded", name)
		}
	}
}

// A session offers cadre's permission modes, starts in the
// conversation's, and changes it when the editor picks another; its slash
// commands are offered too.
func TestSessionModesAndCommands(t *testing.T) {
	h := start(t, &fakeBackend{mode: "acceptEdits", commands: []string{"review", "ship"}})
	resp, err := h.conn.NewSession(h.ctx, acpsdk.NewSessionRequest{Cwd: "/work/project", McpServers: []acpsdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	conv := h.opened()
	var ids []string
	for _, m := range resp.Modes.AvailableModes {
		ids = append(ids, string(m.Id))
	}
	if resp.Modes == nil || resp.Modes.CurrentModeId != "acceptEdits" || strings.Join(ids, ",") != "default,acceptEdits,plan,bypassPermissions" {
		t.Errorf("modes = %+v (%v)", resp.Modes, ids)
	}
	if _, err := h.conn.SetSessionMode(h.ctx, acpsdk.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: "plan"}); err != nil {
		t.Fatal(err)
	}
	if got := received(t, conv.modes, "the mode change"); got != "plan" {
		t.Errorf("mode set to %q, want plan", got)
	}
	if _, err := h.conn.SetSessionMode(h.ctx, acpsdk.SetSessionModeRequest{SessionId: resp.SessionId, ModeId: "sideways"}); err == nil {
		t.Error("an unknown mode was accepted")
	}
	ups := h.client.await(t, "the commands", func(ups []acpsdk.SessionUpdate) bool { return len(ups) > 0 })
	var names []string
	if c := ups[0].AvailableCommandsUpdate; c != nil {
		for _, cmd := range c.AvailableCommands {
			names = append(names, cmd.Name)
		}
	}
	if strings.Join(names, ",") != "review,ship" {
		t.Errorf("first update = %+v, want the commands review and ship", ups[0])
	}
}

func TestMessageFromPromptBlocks(t *testing.T) {
	blocks := []acpsdk.ContentBlock{
		acpsdk.TextBlock("Explain this:"),
		acpsdk.ResourceBlock(acpsdk.EmbeddedResourceResource{TextResourceContents: &acpsdk.TextResourceContents{Uri: "file:///p/a.go", Text: "package a"}}),
		acpsdk.ResourceLinkBlock("spec", "https://example.com/spec"),
		acpsdk.ImageBlock("iVBOR", "image/png"),
	}
	m, err := message(blocks, true)
	if err != nil {
		t.Fatal(err)
	}
	want := "Explain this:\n\n<context ref=\"file:///p/a.go\">\npackage a\n</context>\n\nReferenced: spec <https://example.com/spec>"
	if m.Text != want || len(m.Images) != 1 || m.Images[0] != (Image{MediaType: "image/png", Data: "iVBOR"}) {
		t.Errorf("message = %+v", m)
	}
}

// A mode cadre has beyond the four offered (one a newer cadre adds) is
// listed when a session starts in it.
func TestModesListTheCurrentOne(t *testing.T) {
	m := modes("dontAsk")
	last := m.AvailableModes[len(m.AvailableModes)-1]
	if m.CurrentModeId != "dontAsk" || last.Id != "dontAsk" || len(m.AvailableModes) != len(permissionModes)+1 {
		t.Errorf("modes(dontAsk) = %+v", m)
	}
}
