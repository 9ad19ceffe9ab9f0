package subagent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

// --- profile test helpers, shared with gateway_profile_test.go ---

// newProfileHarness is newHarness with the surface configured.
func newProfileHarness(t *testing.T, su setup, surface string) *harness {
	t.Helper()
	su.subagents.Surface = surface
	return newHarness(t, su)
}

// profileTools are the caller's tools under the surface: the service's own
// when it is the configured one, else every tool of that profile built on
// the same service, whatever the caller may spawn. Like the runtime, a
// test takes them once and keeps them: they remember the labels given.
func (h *harness) profileTools(c Caller, surface string) []tool.Tool {
	if h.surface == surface || h.surface == "" && surface == "claude" {
		return h.svc.Tools(c)
	}
	return h.allTools(c, surface)
}

// allTools are every tool of the surface's profile for c, whatever c may
// spawn (a tool's own depth check is then what answers).
func (h *harness) allTools(c Caller, surface string) []tool.Tool {
	if c.Group == nil {
		c.Group = h.svc.orphans
	}
	p := h.profile(surface)(h.svc)
	all, ok := p.(interface{ All(Caller) []tool.Tool })
	if !ok {
		return p.Tools(c)
	}
	return all.All(c)
}

// invoke calls the named tool as the loop would, input checked against
// its schema. It is safe on any goroutine.
func invokeTool(ctx context.Context, tools []tool.Tool, name string, c Caller, toolUseID string, in any) (tool.Result, error) {
	i := slices.IndexFunc(tools, func(t tool.Tool) bool { return t.Info().Name == name })
	if i < 0 {
		return tool.Result{}, fmt.Errorf("no tool %s among %v", name, names(tools))
	}
	raw, err := json.Marshal(in)
	if err != nil {
		return tool.Result{}, err
	}
	if v, ok := tools[i].(tool.Validating); ok {
		if err := v.ValidateInput(raw); err != nil {
			return tool.Result{}, fmt.Errorf("input %s does not fit %s's schema: %w", raw, name, err)
		}
	}
	return tools[i].Call(ctx, envFor(c, toolUseID), raw)
}

// invokeAsync calls a tool on a goroutine of its own, as the loop runs
// concurrency-safe calls; the result (a Go error as an error result)
// arrives on the channel.
func invokeAsync(tools []tool.Tool, name string, c Caller, in any) <-chan tool.Result {
	out := make(chan tool.Result, 1)
	go func() {
		res, err := invokeTool(context.Background(), tools, name, c, "toolu_"+name, in)
		if err != nil {
			res = tool.Errorf("%v", err)
		}
		out <- res
	}()
	return out
}

// mustInvokeTool calls a tool on the test goroutine; a Go error fails the test.
func mustInvokeTool(t *testing.T, tools []tool.Tool, name string, c Caller, in any) tool.Result {
	t.Helper()
	res, err := invokeTool(context.Background(), tools, name, c, "toolu_"+name, in)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// holds keep children in their model until a test lets them go.
type holds struct {
	mu sync.Mutex
	m  map[string]*hold
}

type hold struct {
	entered, released chan struct{}
	enter, release    sync.Once
}

func (gs *holds) get(name string) *hold {
	gs.mu.Lock()
	defer gs.mu.Unlock()
	if gs.m == nil {
		gs.m = map[string]*hold{}
	}
	g, ok := gs.m[name]
	if !ok {
		g = &hold{entered: make(chan struct{}), released: make(chan struct{})}
		gs.m[name] = g
	}
	return g
}

func (g *hold) wait(ctx context.Context) error {
	g.enter.Do(func() { close(g.entered) })
	select {
	case <-g.released:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *hold) open() { g.release.Do(func() { close(g.released) }) }

func (g *hold) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(waitFor):
		t.Fatal("the child never reached its model")
	}
}

// profileScript answers by the child's first prompt:
//   - "block:<hold>": waits at the hold on its first turn, then echoes;
//   - "tool:<hold>": waits at the hold, calls Read, then echoes;
//   - "fail": a model error;
//   - anything else: "echo: " and the last user text.
func profileScript(gs *holds) script {
	return func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
		prompt := firstUserText(req)
		if name, ok := strings.CutPrefix(prompt, "block:"); ok && turn(req) == 0 {
			if err := gs.get(name).wait(ctx); err != nil {
				return nil, err
			}
		}
		if name, ok := strings.CutPrefix(prompt, "tool:"); ok && turn(req) == 0 {
			if err := gs.get(name).wait(ctx); err != nil {
				return nil, err
			}
			return replyBlocks(use("toolu_read", "Read", fakeIn{FilePath: "a.go"})), nil
		}
		if prompt == "fail" {
			return nil, errBoom
		}
		return reply("echo: " + lastUserTextOf(req)), nil
	}
}

func lastUserTextOf(req *llm.Request) string {
	for _, m := range slices.Backward(req.Messages) {
		if m.Role == llm.RoleUser {
			if text := m.Text(); text != "" {
				return text
			}
		}
	}
	return ""
}

// agentIDOf is the agent (session) id in a harness reply's Meta.
func agentIDOf(t *testing.T, res tool.Result) string {
	t.Helper()
	m, ok := res.Meta.(map[string]any)
	if !ok {
		t.Fatalf("reply Meta is %T, want a map; reply: %s", res.Meta, resultText(res))
	}
	id, _ := m["agentId"].(string)
	if id == "" {
		t.Fatalf("reply has no agent id: %s", resultText(res))
	}
	return id
}

// head is the three lines every harness reply about an agent starts with.
func harnessHead(agentType, id string) string {
	return fmt.Sprintf("agent_key: agent:%s:%s\nagent_id: %s\nsession_id: sub-%s\n", agentType, id, agentType, id)
}

// report is task_output's text for a task that ended.
func harnessReportText(agentType, id, label, status, rest string) string {
	s := harnessHead(agentType, id) + "task_id: task_" + id + "\n"
	if label != "" {
		s += "label: " + label + "\n"
	}
	return s + "status: " + status + rest
}

func profileTaskRules(t *testing.T, pairs ...[2]string) permission.TaskRules {
	t.Helper()
	r, err := permission.ParseTaskRules(pairs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// --- harness profile ---

// TestHarnessTools: the profile's tool names, and agent_spawn's
// description listing the agents the caller may spawn.
func TestHarnessTools(t *testing.T) {
	h := newProfileHarness(t, setup{agents: map[string]string{
		"visible": agentFile("visible", "Sees things", "", "Look."),
		"hidden":  agentFile("hidden", "Hides", "hidden: true\n", "Hide."),
	}}, "harness")
	tools := h.profileTools(h.mainCaller(), "harness")
	want := []string{"agent_spawn", "agent_send", "agent_list", "task_output", "task_cancel", "task_list", "wait_async_results"}
	if d := cmp.Diff(want, names(tools)); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	desc := tools[0].Info().Description
	if !strings.Contains(desc, "- visible: Sees things") || !strings.Contains(desc, "- general-purpose:") || strings.Contains(desc, "hidden") {
		t.Errorf("agent_spawn's description lists the wrong agents:\n%s", desc)
	}
}

// TestHarnessSpawnReplies checks every reply of agent_spawn, text exact.
func TestHarnessSpawnReplies(t *testing.T) {
	zero, negative, one := 0, -5, 1
	tests := []struct {
		name    string
		in      AgentSpawnInput
		hold    string // the child waits here until the reply is in
		want    string // after the head; %s is the agent id
		isError bool
	}{
		{name: "ok", in: AgentSpawnInput{AgentID: "general-purpose", Task: "hello"}, want: "status: ok\nreply: echo: hello"},
		{name: "error", in: AgentSpawnInput{AgentID: "general-purpose", Task: "fail"}, want: "status: error\nerror: model: server: boom", isError: true},
		{name: "accepted", in: AgentSpawnInput{AgentID: "general-purpose", Task: "block:acc", TimeoutSeconds: &zero}, hold: "acc", want: "status: accepted\ntask_id: task_%s"},
		{name: "negative timeout is the background", in: AgentSpawnInput{AgentID: "general-purpose", Task: "block:neg", TimeoutSeconds: &negative}, hold: "neg", want: "status: accepted\ntask_id: task_%s"},
		{name: "background definition", in: AgentSpawnInput{AgentID: "bg", Task: "block:bg"}, hold: "bg", want: "status: accepted\ntask_id: task_%s"},
		{name: "timeout_promoted", in: AgentSpawnInput{AgentID: "general-purpose", Task: "block:slow", TimeoutSeconds: &one}, hold: "slow", want: "status: timeout_promoted\ntask_id: task_%s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			gs := &holds{}
			h := newProfileHarness(t, setup{
				agents: map[string]string{"bg": agentFile("bg", "Background worker", "background: true\n", "Work.")},
				script: profileScript(gs),
			}, "harness")
			c := h.mainCaller()
			tools := h.profileTools(c, "harness")
			if tt.hold != "" {
				defer gs.get(tt.hold).open()
			}
			res := mustInvokeTool(t, tools, "agent_spawn", c, tt.in)
			id := agentIDOf(t, res)
			want := harnessHead(tt.in.AgentID, id) + strings.ReplaceAll(tt.want, "%s", id)
			if d := cmp.Diff(want, resultText(res)); d != "" {
				t.Errorf("reply (-want +got):\n%s", d)
			}
			if res.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v", res.IsError, tt.isError)
			}
			if tt.hold == "" {
				return
			}
			// A background run is a task, found by its task_ id.
			if _, err := h.svc.cfg.Tasks.GetTask(context.Background(), id); err != nil {
				t.Errorf("no task record for the background run: %v", err)
			}
		}))
	}
}

// TestHarnessSpawnRefusals checks the errors of calls that start nothing,
// the depth limit's exact words first.
func TestHarnessSpawnRefusals(t *testing.T) {
	big := 601
	tests := []struct {
		name     string
		maxDepth int
		depth    int
		in       AgentSpawnInput
		want     string // the whole text, or its start when prefix
		prefix   bool
	}{
		{name: "depth, default max", depth: 1, in: AgentSpawnInput{AgentID: "general-purpose", Task: "x"}, want: "Error: Maximum spawn depth exceeded (max=1)"},
		{name: "depth, max 3", maxDepth: 3, depth: 3, in: AgentSpawnInput{AgentID: "general-purpose", Task: "x"}, want: "Error: Maximum spawn depth exceeded (max=3)"},
		{name: "no task", in: AgentSpawnInput{AgentID: "general-purpose"}, want: `Error: task is empty: say what agent "general-purpose" should do`},
		{name: "no agent_id", in: AgentSpawnInput{Task: "x"}, want: "Error: agent_id is required: one of general-purpose, visible"},
		{name: "unknown agent_id", in: AgentSpawnInput{AgentID: "nope", Task: "x"}, want: `Error: unknown agent_id "nope"; you may spawn: general-purpose, visible`},
		{name: "traversal in agent_id", in: AgentSpawnInput{AgentID: "../x", Task: "x"}, want: "Error: invalid agent_id: ", prefix: true},
		{name: "timeout above 600", in: AgentSpawnInput{AgentID: "general-purpose", Task: "x", TimeoutSeconds: &big}, want: "Error: timeout_seconds must be at most 600, got 601"},
		{name: "bad label", in: AgentSpawnInput{AgentID: "general-purpose", Task: "x", Label: "a b"}, want: `Error: invalid label "a b": `, prefix: true},
		{name: "denied agent", in: AgentSpawnInput{AgentID: "secret", Task: "x"}, want: "Error: Permission to use Agent denied", prefix: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newProfileHarness(t, setup{
				agents: map[string]string{
					"visible": agentFile("visible", "Sees", "", "Look."),
					"secret":  agentFile("secret", "Secret", "", "Shh."),
				},
				subagents: config.Subagents{MaxSpawnDepth: tt.maxDepth},
				task:      profileTaskRules(t, [2]string{"secret", "deny"}),
			}, "harness")
			c := h.mainCaller()
			c.Depth = tt.depth
			// At the limit the runtime offers no tools at all; the tool
			// itself still refuses.
			res := mustInvokeTool(t, h.profileTools(c, "harness"), "agent_spawn", c, tt.in)
			got := resultText(res)
			if !res.IsError || (tt.prefix && !strings.HasPrefix(got, tt.want)) || (!tt.prefix && got != tt.want) {
				t.Errorf("reply (error %v) = %q, want %q", res.IsError, got, tt.want)
			}
			if n := len(h.requestsOf("general-purpose")) + len(h.requestsOf("secret")); n != 0 {
				t.Errorf("a refused spawn called a model %d times", n)
			}
		})
	}
}

// TestHarnessLabels: a label is unique among the unfinished agents of the
// tree, ignoring case, foreground runs included; it names its agent for
// agent_send, also after a foreground run ended; once the agent has ended
// the label is free again.
func TestHarnessLabels(t *testing.T) {
	gs := &holds{}
	h := newProfileHarness(t, setup{script: profileScript(gs)}, "harness")
	c := h.mainCaller()
	tools := h.profileTools(c, "harness")
	zero := 0
	bg := mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "block:a", Label: "Rev", TimeoutSeconds: &zero})
	bgID := agentIDOf(t, bg)
	taken := mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "x", Label: "rev"})
	want := fmt.Sprintf(`Error: the label "rev" is taken by agent agent:general-purpose:%s, which is still running; pick another label, or message it with agent_send`, bgID)
	if d := cmp.Diff(want, resultText(taken)); d != "" || !taken.IsError {
		t.Errorf("second label (-want +got):\n%s", d)
	}

	// A foreground run holds its label too, though it has no task record.
	fg := make(chan tool.Result, 1)
	go func() {
		res, err := invokeTool(context.Background(), tools, "agent_spawn", c, "toolu_fg", AgentSpawnInput{AgentID: "general-purpose", Task: "block:b", Label: "fg"})
		if err != nil {
			res = tool.Errorf("%v", err)
		}
		fg <- res
	}()
	gs.get("b").waitEntered(t)
	if res := mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "x", Label: "FG"}); !res.IsError || !strings.Contains(resultText(res), "is taken by agent") {
		t.Errorf("a running foreground agent's label was given again: %s", resultText(res))
	}
	gs.get("b").open()
	var first tool.Result
	select {
	case first = <-fg:
	case <-time.After(waitFor):
		t.Fatal("the foreground spawn never returned")
	}
	fgID := agentIDOf(t, first)
	if want := harnessHead("general-purpose", fgID) + "status: ok\nreply: echo: block:b"; resultText(first) != want {
		t.Errorf("foreground spawn = %q, want %q", resultText(first), want)
	}

	// Ended in the foreground, the agent is still reached by its label.
	again := mustInvokeTool(t, tools, "agent_send", c, AgentSendInput{Label: "FG", Message: "again"})
	if d := cmp.Diff(harnessHead("general-purpose", fgID)+"status: ok\nreply: echo: again", resultText(again)); d != "" {
		t.Errorf("agent_send by label (-want +got):\n%s", d)
	}

	// Once the background agent ends, its label is free.
	gs.get("a").open()
	out := mustInvokeTool(t, tools, "task_output", c, HarnessTaskOutputInput{TaskID: "task_" + bgID})
	if !strings.Contains(resultText(out), "status: completed") {
		t.Fatalf("task_output = %s", resultText(out))
	}
	if res := mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "y", Label: "rev"}); res.IsError {
		t.Errorf("the label of a finished agent is still taken: %s", resultText(res))
	}
}

// TestHarnessIDForms: whatever form of an id a reply gave — task_<id>,
// sub-<id>, the agent_key, the stored session key, the bare id — is taken
// back.
func TestHarnessIDForms(t *testing.T) {
	gs := &holds{}
	h := newProfileHarness(t, setup{
		agents: map[string]string{"other": agentFile("other", "Other", "", "Other.")},
		script: profileScript(gs),
	}, "harness")
	c := h.mainCaller()
	tools := h.profileTools(c, "harness")
	zero := 0
	id := agentIDOf(t, mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "hello", TimeoutSeconds: &zero}))

	out := mustInvokeTool(t, tools, "task_output", c, HarnessTaskOutputInput{TaskID: "task_" + id})
	if d := cmp.Diff(harnessReportText("general-purpose", id, "", "completed", "\nreply: echo: hello"), resultText(out)); d != "" {
		t.Errorf("task_output by task_ id (-want +got):\n%s", d)
	}
	noBlock := false
	if out := mustInvokeTool(t, tools, "task_output", c, HarnessTaskOutputInput{TaskID: id, Block: &noBlock}); !strings.Contains(resultText(out), "status: completed") {
		t.Errorf("task_output by the bare id: %s", resultText(out))
	}

	for i, key := range []string{
		"agent:general-purpose:" + id,
		"agent:general-purpose:subagent:" + id,
		"sub-" + id,
		"task_" + id,
		id,
	} {
		msg := fmt.Sprintf("message %d", i)
		res := mustInvokeTool(t, tools, "agent_send", c, AgentSendInput{AgentKey: key, Message: msg})
		if d := cmp.Diff(harnessHead("general-purpose", id)+"status: ok\nreply: echo: "+msg, resultText(res)); d != "" {
			t.Errorf("agent_send to %q (-want +got):\n%s", key, d)
		}
	}

	bad := []struct{ key, want string }{
		{"agent:other:" + id, fmt.Sprintf(`Error: agent_key "agent:other:%s" names agent_id "other", but that session belongs to "general-purpose"`, id)},
		{"agent:general-purpose:0000-none", `Error: no agent "agent:general-purpose:0000-none": pass the agent_key from agent_spawn's reply, or a label`},
		{"agent:general-purpose:../x", "Error: invalid agent_key"},
	}
	for _, b := range bad {
		res := mustInvokeTool(t, tools, "agent_send", c, AgentSendInput{AgentKey: b.key, Message: "m"})
		if !res.IsError || !strings.HasPrefix(resultText(res), b.want) {
			t.Errorf("agent_send to %q = %q, want an error starting %q", b.key, resultText(res), b.want)
		}
	}

	// task_cancel takes the task_ form too.
	run := agentIDOf(t, mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "block:c", Label: "slow", TimeoutSeconds: &zero}))
	gs.get("c").waitEntered(t)
	res := mustInvokeTool(t, tools, "task_cancel", c, HarnessTaskCancelInput{TaskID: "task_" + run})
	want := fmt.Sprintf("task_id: task_%s\nstatus: cancelled\nnote: Stopped task %s (slow). Its partial result is kept.", run, run)
	if d := cmp.Diff(want, resultText(res)); d != "" {
		t.Errorf("task_cancel (-want +got):\n%s", d)
	}
	out = mustInvokeTool(t, tools, "task_output", c, HarnessTaskOutputInput{TaskID: "sub-" + run})
	if !strings.HasPrefix(resultText(out), harnessReportText("general-purpose", run, "slow", "cancelled", "\nerror: ")) {
		t.Errorf("task_output of a cancelled task: %s", resultText(out))
	}
	if res := mustInvokeTool(t, tools, "task_cancel", c, HarnessTaskCancelInput{TaskID: "task_" + run}); !res.IsError || !strings.HasPrefix(resultText(res), "Error: task "+run+" is not running") {
		t.Errorf("cancelling a finished task: %s", resultText(res))
	}
}

// TestHarnessSendRunning: a message to a running agent is queued and read
// at its next step; with timeout_seconds the call waits for the agent's
// reply and takes it, so no notification follows.
func TestHarnessSendRunning(t *testing.T) {
	tests := []struct {
		name    string
		timeout int
		want    string // after the head; %s is the agent id
	}{
		{name: "no wait", timeout: 0, want: "status: accepted\ntask_id: task_%s\nnote: the agent is still running: your message is queued and it reads it after its current step"},
		{name: "wait for the reply", timeout: 30, want: "status: ok\nreply: echo: ping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			gs := &holds{}
			h := newProfileHarness(t, setup{script: profileScript(gs)}, "harness")
			c := h.mainCaller()
			tools := h.profileTools(c, "harness")
			zero := 0
			id := agentIDOf(t, mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "tool:g", Label: "worker", TimeoutSeconds: &zero}))
			g := gs.get("g")
			g.waitEntered(t)
			sent := invokeAsync(tools, "agent_send", c, AgentSendInput{Label: "worker", Message: "ping", TimeoutSeconds: &tt.timeout})
			// Let the agent go once the message is queued.
			var res tool.Result
			returned := false
			deadline := time.Now().Add(waitFor)
			for h.svc.cfg.Queue.Len(id) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the message was never queued")
				}
				select {
				case res = <-sent:
					returned = true
					if h.svc.cfg.Queue.Len(id) == 0 {
						t.Fatalf("agent_send returned without queueing: %s", resultText(res))
					}
				case <-time.After(time.Millisecond):
				}
			}
			g.open()
			if !returned {
				select {
				case res = <-sent:
				case <-time.After(waitFor):
					t.Fatal("agent_send never returned")
				}
			}
			if d := cmp.Diff(harnessHead("general-purpose", id)+strings.ReplaceAll(tt.want, "%s", id), resultText(res)); d != "" {
				t.Errorf("agent_send (-want +got):\n%s", d)
			}
			if tt.timeout == 0 {
				out := mustInvokeTool(t, tools, "task_output", c, HarnessTaskOutputInput{TaskID: "task_" + id})
				if !strings.HasSuffix(resultText(out), "status: completed\nreply: echo: ping") {
					t.Errorf("the agent did not answer the message: %s", resultText(out))
				}
				return
			}
			if n := h.svc.cfg.Queue.Len(""); n != 0 {
				t.Errorf("%d notifications for a result agent_send already delivered", n)
			}
		}))
	}
}

// TestWaitAsyncResults: all, the first, or up to the timeout.
func TestWaitAsyncResults(t *testing.T) {
	f, one, zero := false, 1, 0
	tests := []struct {
		name    string
		tasks   []string // prompts, all started in the background
		waitAll *bool
		timeout *int
		head    string
		status  []string // each task's status in the report
	}{
		{name: "all", tasks: []string{"hello a", "hello b"}, head: "wait: all\nfinished: 2 of 2\ntimed_out: false", status: []string{"completed", "completed"}},
		{name: "first", tasks: []string{"hello a", "block:b"}, waitAll: &f, head: "wait: first\nfinished: 1 of 2\ntimed_out: false", status: []string{"completed", "running"}},
		{name: "timeout", tasks: []string{"block:a", "block:b"}, timeout: &one, head: "wait: all\nfinished: 0 of 2\ntimed_out: true", status: []string{"running", "running"}},
		{name: "no wait", tasks: []string{"block:a"}, timeout: &zero, head: "wait: all\nfinished: 0 of 1\ntimed_out: true", status: []string{"running"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, inBubble(func(t *testing.T) {
			gs := &holds{}
			h := newProfileHarness(t, setup{script: profileScript(gs)}, "harness")
			c := h.mainCaller()
			tools := h.profileTools(c, "harness")
			var ids, refs []string
			for _, p := range tt.tasks {
				id := agentIDOf(t, mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: p, TimeoutSeconds: &zero}))
				ids = append(ids, id)
				refs = append(refs, "task_"+id)
				if name, ok := strings.CutPrefix(p, "block:"); ok {
					defer gs.get(name).open()
					// Running, so the report's status is certain.
					gs.get(name).waitEntered(t)
				}
			}
			res := mustInvokeTool(t, tools, "wait_async_results", c, WaitAsyncResultsInput{TaskIDs: refs, WaitAll: tt.waitAll, TimeoutSeconds: tt.timeout})
			text := resultText(res)
			top, body, _ := strings.Cut(text, "\n\n")
			if top != tt.head {
				t.Errorf("head = %q, want %q", top, tt.head)
			}
			parts := strings.Split(body, "\n---\n")
			if len(parts) != len(ids) {
				t.Fatalf("%d reports, want %d:\n%s", len(parts), len(ids), text)
			}
			for i, id := range ids {
				want := harnessReportText("general-purpose", id, "", tt.status[i], "")
				if tt.status[i] == "completed" {
					want += "\nreply: echo: " + tt.tasks[i]
				}
				if !strings.HasPrefix(parts[i], want) {
					t.Errorf("report %d = %q, want it to start %q", i, parts[i], want)
				}
			}
		}))
	}
}

// TestWaitAsyncMarksNotified: a result delivered by wait_async_results is
// not notified again, as with task_output; bad ids are refused.
func TestWaitAsyncMarksNotified(t *testing.T) {
	h := newProfileHarness(t, setup{}, "harness")
	c := h.mainCaller()
	tools := h.profileTools(c, "harness")
	ctx := context.Background()
	// A task that ended in another process, not yet announced.
	const id = "0190aaaa-0000-7000-8000-000000000001"
	err := h.svc.cfg.Tasks.CreateTask(ctx, task.Task{
		ID: id, Kind: task.KindLocalAgent, Agent: "general-purpose", Description: "remote work", RootSessionID: c.RootSessionID,
		ChildSessionID: id, Status: task.StatusCompleted, Result: "all done", Created: fixedNow, Finished: fixedNow,
	})
	if err != nil {
		t.Fatal(err)
	}
	res := mustInvokeTool(t, tools, "wait_async_results", c, WaitAsyncResultsInput{TaskIDs: []string{"task_" + id, id}})
	want := "wait: all\nfinished: 1 of 1\ntimed_out: false\n\n" + harnessReportText("general-purpose", id, "", "completed", "\nreply: all done")
	if d := cmp.Diff(want, resultText(res)); d != "" {
		t.Errorf("reply (-want +got):\n%s", d)
	}
	rec, err := h.svc.cfg.Tasks.GetTask(ctx, id)
	if err != nil || !rec.Notified {
		t.Errorf("task notified = %v (%v), want true", rec.Notified, err)
	}
	if first, _ := h.svc.cfg.Tasks.MarkNotified(ctx, id); first {
		t.Error("a notification could still be sent")
	}
	for _, in := range []WaitAsyncResultsInput{{TaskIDs: []string{}}, {TaskIDs: []string{"task_nope"}}, {TaskIDs: []string{"../etc"}}} {
		if res := mustInvokeTool(t, tools, "wait_async_results", c, in); !res.IsError || !strings.HasPrefix(resultText(res), "Error: ") {
			t.Errorf("wait_async_results(%v) = %q, want an error", in.TaskIDs, resultText(res))
		}
	}
}

// TestHarnessTaskList lists the tree's tasks with task_ ids and filters by
// status.
func TestHarnessTaskList(t *testing.T) {
	h := newProfileHarness(t, setup{script: profileScript(&holds{})}, "harness")
	c := h.mainCaller()
	tools := h.profileTools(c, "harness")
	zero := 0
	id := agentIDOf(t, mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "hello", Label: "lb", TimeoutSeconds: &zero}))
	mustInvokeTool(t, tools, "task_output", c, HarnessTaskOutputInput{TaskID: "task_" + id})
	tests := []struct {
		filter, want string
		isError      bool
	}{
		{filter: "", want: fmt.Sprintf(`task_%s  completed  agent_id: general-purpose  label: lb  "lb"  started 0s ago  15 tokens`, id)},
		{filter: "completed", want: fmt.Sprintf(`task_%s  completed  agent_id: general-purpose  label: lb  "lb"  started 0s ago  15 tokens`, id)},
		{filter: "running", want: "No tasks."},
		{filter: "bogus", want: `Error: unknown status_filter "bogus": want running, completed, failed, cancelled or all`, isError: true},
	}
	for _, tt := range tests {
		res := mustInvokeTool(t, tools, "task_list", c, TaskListInput{StatusFilter: tt.filter})
		if d := cmp.Diff(tt.want, resultText(res)); d != "" || res.IsError != tt.isError {
			t.Errorf("task_list(%q) (error %v) (-want +got):\n%s", tt.filter, res.IsError, d)
		}
	}
}

// TestAgentLists: agent_list and agents_list show the agents the caller
// may spawn — hidden, denied and primary agents left out.
func TestAgentLists(t *testing.T) {
	agents := map[string]string{
		"visible": agentFile("visible", "Sees   things", "", "Look."),
		"hidden":  agentFile("hidden", "Hides", "hidden: true\n", "Hide."),
		"secret":  agentFile("secret", "Secret", "", "Shh."),
		"boss":    agentFile("boss", "Primary", "mode: primary\n", "Boss."),
	}
	for _, tt := range []struct {
		surface, tool string
		want          func(gp string) string
	}{
		{"harness", "agent_list", func(gp string) string { return "general-purpose: " + gp + "\nvisible: Sees things" }},
		{"gateway", "agents_list", func(gp string) string {
			return fmt.Sprintf("{\n  \"requester\": \"main\",\n  \"agents\": [\n    {\n      \"id\": \"general-purpose\",\n      \"description\": %q\n    },\n    {\n      \"id\": \"visible\",\n      \"description\": \"Sees things\"\n    }\n  ]\n}", gp)
		}},
	} {
		t.Run(tt.surface, func(t *testing.T) {
			h := newProfileHarness(t, setup{agents: agents, task: profileTaskRules(t, [2]string{"secret", "deny"}), subagents: config.Subagents{AllowAgents: []string{"*"}}}, tt.surface)
			c := h.mainCaller()
			gp, _ := h.agents.Get("general-purpose")
			res := mustInvokeTool(t, h.profileTools(c, tt.surface), tt.tool, c, struct{}{})
			if d := cmp.Diff(tt.want(oneLine(gp.Description)), resultText(res)); d != "" {
				t.Errorf("%s (-want +got):\n%s", tt.tool, d)
			}
		})
	}
}

// TestHarnessSendDepth: resuming an agent is a spawn, refused past the
// depth limit in the same words.
func TestHarnessSendDepth(t *testing.T) {
	h := newProfileHarness(t, setup{script: profileScript(&holds{})}, "harness")
	c := h.mainCaller()
	id := agentIDOf(t, mustInvokeTool(t, h.profileTools(c, "harness"), "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "hello"}))
	deep := c
	deep.Depth = 1
	res := mustInvokeTool(t, h.allTools(deep, "harness"), "agent_send", deep, AgentSendInput{AgentKey: "agent:general-purpose:" + id, Message: "more"})
	if got := resultText(res); !res.IsError || got != "Error: Maximum spawn depth exceeded (max=1)" {
		t.Errorf("agent_send past the depth limit = %q", got)
	}
}
