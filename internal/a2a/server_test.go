package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre"
	cadrea2a "github.com/cadre-dev/cadre/internal/a2a"
	"github.com/cadre-dev/cadre/llm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// model is a scripted main agent: its reply to each request is fn's.
type model struct {
	mu       sync.Mutex
	requests []*llm.Request
	fn       func(ctx context.Context, req *llm.Request) (*llm.Response, error)
}

func (m *model) call(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	return m.fn(ctx, req)
}

// fixture is a runtime in a private project, its A2A server on httptest,
// and a client of it made by a2a-go from the agent card.
type fixture struct {
	rt     *cadre.Runtime
	srv    *cadrea2a.Server
	http   *httptest.Server
	client *a2aclient.Client
	card   *a2a.AgentCard
}

func newFixture(t *testing.T, m *model, transport a2a.TransportProtocol, opts cadre.Options) *fixture {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	opts.Cwd = dir
	opts.LLM = &llm.ModelFunc{ID: "test:model", Func: m.call}
	opts.Getenv = func(k string) string {
		if k == "CADRE_HOME" {
			return home
		}
		return ""
	}
	rt, err := cadre.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := cadrea2a.New(cadrea2a.Config{Runtime: rt})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		hs.Close()
		srv.Close()
		rt.Close()
	})
	card, err := agentcard.NewResolver(hs.Client()).Resolve(t.Context(), hs.URL)
	if err != nil {
		t.Fatalf("resolve the agent card: %v", err)
	}
	client, err := a2aclient.NewFromCard(t.Context(), card, a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{transport}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Destroy() })
	return &fixture{rt: rt, srv: srv, http: hs, client: client, card: card}
}

func userText(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

func answerText(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}

func echo(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	return llm.Reply(llm.Text(fmt.Sprintf("heard %q after %d messages", req.Messages[len(req.Messages)-1].Text(), len(req.Messages)))), nil
}

func TestAgentCardListsTheAgentAndItsVisibleSubagents(t *testing.T) {
	m := &model{fn: echo}
	f := newFixture(t, m, a2a.TransportProtocolJSONRPC, cadre.Options{Agents: []cadre.Agent{
		{Name: "reviewer", Description: "Reviews a change", Prompt: "Review."},
		{Name: "secret", Description: "Not for others", Prompt: "x", Hidden: true},
	}})
	if f.card.Name != "cadre" || f.card.Version != cadre.Version() || !f.card.Capabilities.Streaming {
		t.Errorf("card %+v", f.card)
	}
	var urls []string
	for _, i := range f.card.SupportedInterfaces {
		urls = append(urls, string(i.ProtocolBinding)+" "+i.URL)
	}
	want := []string{"JSONRPC " + f.http.URL + cadrea2a.JSONRPCPath, "HTTP+JSON " + f.http.URL + cadrea2a.RESTPath}
	if fmt.Sprint(urls) != fmt.Sprint(want) {
		t.Errorf("interfaces %v, want %v", urls, want)
	}
	skills := map[string]string{}
	for _, s := range f.card.Skills {
		skills[s.ID] = s.Description
	}
	if skills["reviewer"] != "Reviews a change" {
		t.Errorf("skills %v: want the reviewer subagent", skills)
	}
	if _, ok := skills["secret"]; ok {
		t.Errorf("skills %v: a hidden subagent is listed", skills)
	}
	if _, ok := skills["general-purpose"]; !ok {
		t.Errorf("skills %v: the built-in general-purpose agent is missing", skills)
	}
	// The card is public: it names no path of the machine (issue 22).
	if b, _ := json.Marshal(f.card); strings.Contains(string(b), f.rt.Cwd()) || strings.Contains(string(b), os.TempDir()) {
		t.Errorf("the public card names a path: %s", b)
	}
}

// TestMessageRunsTheMainAgentAndTheContextContinues, on both bindings:
// the answer is the task's artifact, the context id is the cadre session's
// id, and a second message in the context continues that session.
func TestMessageRunsTheMainAgentAndTheContextContinues(t *testing.T) {
	for _, tr := range []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON} {
		t.Run(string(tr), func(t *testing.T) {
			m := &model{fn: echo}
			f := newFixture(t, m, tr, cadre.Options{})
			task := sendAndWait(t, f, userText("hello"))
			if task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("state %s, want completed", task.Status.State)
			}
			if got := answerText(task); got != `heard "hello" after 1 messages` {
				t.Errorf("answer %q", got)
			}
			sess, _, err := f.rt.Session(t.Context(), task.ContextID)
			if err != nil {
				t.Fatalf("the context id %s names no session: %v", task.ContextID, err)
			}
			if sess.ParentID != "" || sess.Agent != "main" {
				t.Errorf("session %+v: want the main agent's", sess)
			}
			second := userText("again")
			second.ContextID = task.ContextID
			task2 := sendAndWait(t, f, second)
			if got := answerText(task2); got != `heard "again" after 3 messages` {
				t.Errorf("second answer %q: the session did not continue", got)
			}
			if task2.ID == task.ID || task2.ContextID != task.ContextID {
				t.Errorf("second task %s in %s, first %s in %s", task2.ID, task2.ContextID, task.ID, task.ContextID)
			}
		})
	}
}

// sendAndWait sends msg (non-streaming: the call returns once the task is
// done or waits for input).
func sendAndWait(t *testing.T, f *fixture, msg *a2a.Message) *a2a.Task {
	t.Helper()
	res, err := f.client.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("result %T, want a task", res)
	}
	return task
}

func TestAContextThatIsNotAUUIDMapsToOneSession(t *testing.T) {
	a, b := cadrea2a.SessionID("my-chat"), cadrea2a.SessionID("my-chat")
	if a != b || a == "my-chat" {
		t.Errorf("%q, %q: want one derived UUID", a, b)
	}
	if id := "0192f7a4-5a47-7f8e-9b1a-2c0d7e4a9b13"; cadrea2a.SessionID(id) != id {
		t.Errorf("a UUID context id must be the session id itself")
	}
	if cadrea2a.SessionID("other") == a {
		t.Error("two contexts, one session")
	}
}

// TestStreamingShowsSubagentsStartAndFinish: the main agent starts two
// subagents; a streaming client sees each start and finish as working
// status updates, then the answer artifact, then completed.
func TestStreamingShowsSubagentsStartAndFinish(t *testing.T) {
	m := &model{fn: func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent != "main" {
			return llm.Reply(llm.Text("child says " + req.Messages[0].Text())), nil
		}
		last := req.Messages[len(req.Messages)-1]
		var results []string
		for _, b := range last.Content {
			if b.Type == llm.BlockToolResult {
				results = append(results, b.ResultText())
			}
		}
		if len(results) > 0 {
			return llm.Reply(llm.Text("both done: " + strings.Join(results, " | "))), nil
		}
		return llm.Reply(
			llm.ToolUse("toolu_a", "Agent", json.RawMessage(`{"description":"part A","prompt":"do A"}`)),
			llm.ToolUse("toolu_b", "Agent", json.RawMessage(`{"description":"part B","prompt":"do B"}`)),
		), nil
	}}
	f := newFixture(t, m, a2a.TransportProtocolHTTPJSON, cadre.Options{})
	var started, finished []string
	var states []a2a.TaskState
	var answer string
	for ev, err := range f.client.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: userText("split it")}) {
		if err != nil {
			t.Fatal(err)
		}
		switch e := ev.(type) {
		case *a2a.TaskStatusUpdateEvent:
			states = append(states, e.Status.State)
			if e.Status.Message == nil {
				continue
			}
			meta, _ := e.Status.Message.Metadata["cadre"].(map[string]any)
			switch meta["event"] {
			case "subagent_started":
				started = append(started, fmt.Sprint(meta["description"]))
			case "subagent_finished":
				finished = append(finished, fmt.Sprint(meta["status"]))
			}
		case *a2a.TaskArtifactUpdateEvent:
			for _, p := range e.Artifact.Parts {
				answer += p.Text()
			}
		}
	}
	if len(started) != 2 || !strings.Contains(strings.Join(started, ","), "part A") || !strings.Contains(strings.Join(started, ","), "part B") {
		t.Errorf("started %v, want part A and part B", started)
	}
	if fmt.Sprint(finished) != "[completed completed]" {
		t.Errorf("finished %v, want two completed", finished)
	}
	if !strings.Contains(answer, "child says do A") || !strings.Contains(answer, "child says do B") {
		t.Errorf("answer %q", answer)
	}
	if len(states) == 0 || states[len(states)-1] != a2a.TaskStateCompleted {
		t.Errorf("states %v, want completed last", states)
	}
}

// TestApprovalIsInputRequired: a Bash call needs approval; the task is
// input-required with the request, and a "yes" to the task lets it run.
// A second task in which the answer is a refusal gives the model the
// reason.
func TestApprovalIsInputRequired(t *testing.T) {
	for _, tc := range []struct {
		answer *a2a.Message
		want   string
	}{
		{userText("yes"), "ran"},
		{a2a.NewMessage(a2a.MessageRoleUser, a2a.NewDataPart(map[string]any{"allow": true})), "ran"},
		{userText("not on this machine"), "not on this machine"},
	} {
		m := &model{fn: func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
			last := req.Messages[len(req.Messages)-1]
			for _, b := range last.Content {
				if b.Type == llm.BlockToolResult {
					return llm.Reply(llm.Text("tool said: " + b.ResultText())), nil
				}
			}
			return llm.Reply(llm.ToolUse("t1", "Bash", json.RawMessage(`{"command":"echo ran"}`))), nil
		}}
		f := newFixture(t, m, a2a.TransportProtocolJSONRPC, cadre.Options{})
		task := sendAndWait(t, f, userText("run it"))
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("state %s, want input-required", task.Status.State)
		}
		if msg := task.Status.Message; msg == nil || !strings.Contains(msg.Parts[0].Text(), "Bash") || !strings.Contains(msg.Parts[0].Text(), "echo ran") {
			t.Fatalf("input-required message %+v: want the tool and command", msg)
		}
		tc.answer.TaskID, tc.answer.ContextID = task.ID, task.ContextID
		done := sendAndWait(t, f, tc.answer)
		if done.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("state %s after the answer", done.Status.State)
		}
		if got := answerText(done); !strings.Contains(got, tc.want) {
			t.Errorf("answer %q, want it to hold %q", got, tc.want)
		}
	}
}

// TestCancelStopsTheRunAndItsChildren: the main agent starts a subagent
// whose model call waits; cancel ends the task canceled and the child's
// call sees its context end.
func TestCancelStopsTheRunAndItsChildren(t *testing.T) {
	childStarted := make(chan struct{})
	childStopped := make(chan struct{})
	var once sync.Once
	m := &model{fn: func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent != "main" {
			once.Do(func() { close(childStarted) })
			<-ctx.Done()
			close(childStopped)
			return nil, ctx.Err()
		}
		return llm.Reply(llm.ToolUse("toolu_a", "Agent", json.RawMessage(`{"description":"slow part","prompt":"wait"}`))), nil
	}}
	f := newFixture(t, m, a2a.TransportProtocolJSONRPC, cadre.Options{})
	msg := userText("go")
	var taskID a2a.TaskID
	var last a2a.TaskState
	for ev, err := range f.client.SendStreamingMessage(t.Context(), &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatal(err)
		}
		if taskID == "" {
			taskID = ev.TaskInfo().TaskID
		}
		if e, ok := ev.(*a2a.TaskStatusUpdateEvent); ok {
			last = e.Status.State
			if e.Status.Message == nil {
				continue
			}
			if meta, _ := e.Status.Message.Metadata["cadre"].(map[string]any); meta["event"] == "subagent_started" {
				select {
				case <-childStarted:
				case <-t.Context().Done():
					t.Fatal("the child never called its model")
				}
				task, err := f.client.CancelTask(t.Context(), &a2a.CancelTaskRequest{ID: taskID})
				if err != nil {
					t.Fatalf("cancel: %v", err)
				}
				if task.Status.State != a2a.TaskStateCanceled {
					t.Errorf("cancel returned state %s", task.Status.State)
				}
			}
		}
	}
	if last != a2a.TaskStateCanceled {
		t.Errorf("the stream ended in %s, want canceled", last)
	}
	select {
	case <-childStopped:
	case <-t.Context().Done():
		t.Fatal("the child's model call was not stopped")
	}
	task, err := f.client.GetTask(t.Context(), &a2a.GetTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateCanceled {
		t.Errorf("stored state %s, want canceled", task.Status.State)
	}
}

func TestAFailedRunFailsTheTask(t *testing.T) {
	m := &model{fn: func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return nil, &llm.Error{Kind: llm.ErrBadRequest, Message: "the model refused the request"}
	}}
	f := newFixture(t, m, a2a.TransportProtocolJSONRPC, cadre.Options{})
	task := sendAndWait(t, f, userText("hi"))
	if task.Status.State != a2a.TaskStateFailed {
		t.Fatalf("state %s, want failed", task.Status.State)
	}
	if msg := task.Status.Message; msg == nil || !strings.Contains(msg.Parts[0].Text(), "refused") {
		t.Errorf("failure message %+v: want the model's error", msg)
	}
}

func TestBadMessagesAreRefusedWithReasons(t *testing.T) {
	m := &model{fn: echo}
	f := newFixture(t, m, a2a.TransportProtocolJSONRPC, cadre.Options{})
	for name, tc := range map[string]struct {
		msg  *a2a.Message
		want string
	}{
		"file part":  {a2a.NewMessage(a2a.MessageRoleUser, a2a.NewFileURLPart("file:///etc/passwd", "text/plain")), "text and data parts"},
		"empty text": {userText("   "), "no text"},
		"unknown task": {func() *a2a.Message {
			m := userText("yes")
			m.TaskID = "no-such-task"
			return m
		}(), "task"},
	} {
		_, err := f.client.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: tc.msg})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", name, err, tc.want)
		}
	}
	if n := len(m.requests); n != 0 {
		t.Errorf("%d model calls for refused messages", n)
	}
}

// TestAContextIsBusyWhileItsTaskWaits: a second message in a context whose
// task is input-required is refused, naming the task.
func TestAContextIsBusyWhileItsTaskWaits(t *testing.T) {
	m := &model{fn: func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return llm.Reply(llm.ToolUse("t1", "Bash", json.RawMessage(`{"command":"echo ran"}`))), nil
	}}
	f := newFixture(t, m, a2a.TransportProtocolJSONRPC, cadre.Options{})
	task := sendAndWait(t, f, userText("run it"))
	second := userText("something else")
	second.ContextID = task.ContextID
	_, err := f.client.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: second})
	if err == nil || !strings.Contains(err.Error(), string(task.ID)) {
		t.Errorf("error %v, want one naming the waiting task %s", err, task.ID)
	}
}

func TestCardFollowsBaseURLAndToken(t *testing.T) {
	rt, err := cadre.New(context.Background(), cadre.Options{Cwd: t.TempDir(), LLM: &llm.ModelFunc{ID: "t:m", Func: echo},
		Getenv: func(k string) string {
			if k == "CADRE_HOME" {
				return t.TempDir()
			}
			return ""
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if _, err := cadrea2a.New(cadrea2a.Config{Runtime: rt, BaseURL: "file:///x"}); err == nil {
		t.Error("a file: base URL was accepted")
	}
	srv, err := cadrea2a.New(cadrea2a.Config{Runtime: rt, BaseURL: "https://agents.example/"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, cadrea2a.CardPath, nil))
	var card a2a.AgentCard
	if err := json.Unmarshal(rec.Body.Bytes(), &card); err != nil {
		t.Fatal(err)
	}
	if got := card.SupportedInterfaces[0].URL; got != "https://agents.example/a2a/" {
		t.Errorf("interface URL %q", got)
	}
	if len(card.SecuritySchemes) != 0 {
		t.Errorf("security schemes %v without a token", card.SecuritySchemes)
	}
	srv2, err := cadrea2a.New(cadrea2a.Config{Runtime: rt, Bearer: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv2.Close()
	rec = httptest.NewRecorder()
	srv2.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, cadrea2a.CardPath, nil))
	if err := json.Unmarshal(rec.Body.Bytes(), &card); err != nil {
		t.Fatal(err)
	}
	if s, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok || s.Scheme != "Bearer" || len(card.SecurityRequirements) != 1 {
		t.Errorf("with a token: schemes %v, requirements %v; want bearer", card.SecuritySchemes, card.SecurityRequirements)
	}
}

// TestApprovalsAfterTheTaskAreRefused: a background subagent still running
// after the task's answer asks for approval; nobody can answer it then, so
// it is refused at once (not left waiting, which would hold the context
// forever), and the next message in the context runs.
func TestApprovalsAfterTheTaskAreRefused(t *testing.T) {
	var mu sync.Mutex
	var childSaw string
	release := make(chan struct{}) // the child asks once the task is over
	m := &model{fn: func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		var result *llm.Block
		for i, b := range last.Content {
			if b.Type == llm.BlockToolResult {
				result = &last.Content[i]
			}
		}
		if req.Agent != "main" {
			if result != nil {
				mu.Lock()
				childSaw = result.ResultText()
				mu.Unlock()
				return llm.Reply(llm.Text("child done")), nil
			}
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return llm.Reply(llm.ToolUse("t1", "Bash", json.RawMessage(`{"command":"echo late"}`))), nil
		}
		switch {
		case result != nil:
			return llm.Reply(llm.Text("launched it")), nil
		case strings.Contains(last.Text(), "second"):
			return llm.Reply(llm.Text("second answer")), nil
		case strings.Contains(last.Text(), "start"):
			return llm.Reply(llm.ToolUse("toolu_bg", "Agent", json.RawMessage(`{"description":"late asker","prompt":"ask late","run_in_background":true}`))), nil
		}
		return llm.Reply(llm.Text("noted")), nil
	}}
	f := newFixture(t, m, a2a.TransportProtocolJSONRPC, cadre.Options{})
	task := sendAndWait(t, f, userText("start"))
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("state %s", task.Status.State)
	}
	close(release)
	second := userText("second")
	second.ContextID = task.ContextID
	task2 := sendAndWait(t, f, second)
	if got := answerText(task2); got != "second answer" {
		t.Errorf("second answer %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(childSaw, "cancelled before anyone answered") {
		t.Errorf("the late approval's result %q: want it refused", childSaw)
	}
}
