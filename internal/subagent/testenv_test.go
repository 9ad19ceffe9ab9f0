package subagent

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/mailbox"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/sqlite"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/testkit/pgstore"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The harness mirrors how the runtime (runtime.go, run.go) wires a Service
// and the main agent's Caller, with fakes for everything that would leave
// the process: models are llm.ModelFuncs named after what they resolve
// from, so a request's model shows which link of the model chain won, and
// the base tools only record their calls.

// mainModel is the main agent's model; the others resolve by name.
const mainModel = "main-model"

var knownModels = []string{mainModel, "sonnet", "opus", "haiku"}

// fixedNow makes durations 0, so result trailers are exact.
var fixedNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// waitFor bounds every wait on another goroutine.
const waitFor = 10 * time.Second

// script answers every model call of a test. model is the ModelFunc's ID;
// req.Agent says which agent is asking ("main" or the subagent type).
type script func(ctx context.Context, model string, req *llm.Request) (*llm.Response, error)

// setup is what a test varies.
type setup struct {
	// agents are .claude/agents files: name → file content.
	agents map[string]string
	// opencodeAgents are .opencode/agents files: name → file content.
	opencodeAgents map[string]string
	subagents      config.Subagents
	mode           permission.Mode // the main session's
	deny           []string        // permissions.deny
	task           permission.TaskRules
	script         script
	// baseCap, when larger than the base tool count, gives the BaseTools
	// slice spare capacity (a legitimate thing for BaseTools to return).
	baseCap int
	// progressEvery sets Config.ProgressEvery; 0 turns progress summaries
	// off, so that tests see only the model calls they script.
	progressEvery time.Duration
	// now replaces the fixed clock.
	now func() time.Time
	// logger is Config.Logger.
	logger *slog.Logger
	// mailbox gives the Service a memory Mailbox (as a shared store's
	// would be), through which its messages then go.
	mailbox bool
	// transcripts, if set, keeps the sessions' transcripts instead of
	// files (a store's, as in PostgreSQL mode).
	transcripts func(t *testing.T) session.Transcripts
	// sqlite keeps sessions and tasks in one SQLite store, as cadre
	// does, instead of in memory: a background child's session and task
	// records are then written together (records/).
	sqlite bool
	// postgres, a database's URL, keeps sessions, tasks and the mailbox
	// in one PostgreSQL store, as cadre does with CADRE_STORE_URL.
	postgres string
}

type harness struct {
	t        *testing.T
	dir      string // the main workspace and project root
	mem      *session.Mem
	sessions *session.Manager
	bus      *event.Bus
	svc      *Service
	policy   permission.Policy
	agents   *agent.Registry
	script   script
	surface  string // subagents.surface
	base     []tool.Tool
	mainID   string // a main session recorded in the index
	group    *Group // owns every run the test starts

	mu       sync.Mutex
	requests []recorded
	calls    []fakeCall
}

// recorded is one model request as the model saw it.
type recorded struct {
	model string
	req   llm.Request
}

// fakeCall is one call of a fake base tool.
type fakeCall struct {
	Tool, Target, Cwd, SessionID string
}

// agentFile is a Claude Code agent file.
func agentFile(name, description, front, body string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n%s---\n%s\n", name, description, front, body)
}

func newHarness(t *testing.T, su setup) *harness {
	t.Helper()
	dir := t.TempDir()
	if len(su.agents) > 0 {
		adir := filepath.Join(dir, ".claude", "agents")
		if err := os.MkdirAll(adir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range su.agents {
			if err := os.WriteFile(filepath.Join(adir, name+".md"), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, text := range su.opencodeAgents {
		adir := filepath.Join(dir, ".opencode", "agents")
		if err := os.MkdirAll(adir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(adir, name+".md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reg := agent.Load(agent.LoadOptions{Cwd: dir})
	if p := reg.Problems(); len(p) > 0 {
		t.Fatalf("agent files do not load: %v", p)
	}
	var rules permission.Rules
	for _, d := range su.deny {
		r, err := permission.ParseRule(d)
		if err != nil {
			t.Fatal(err)
		}
		rules.Deny = append(rules.Deny, r)
	}
	mode := su.mode
	if mode == "" {
		mode = permission.ModeDefault
	}
	h := &harness{
		t: t, dir: dir, mem: session.NewMem(), bus: &event.Bus{}, agents: reg, script: su.script,
		policy:  permission.Policy{Mode: mode, Rules: rules, Task: su.task, Workspace: dir},
		surface: su.subagents.Surface,
	}
	if h.script == nil {
		h.script = func(context.Context, string, *llm.Request) (*llm.Response, error) { return reply("done"), nil }
	}
	var tr session.Transcripts = session.Files{Dir: filepath.Join(dir, ".state", "sessions")}
	if su.transcripts != nil {
		tr = su.transcripts(t)
	}
	var (
		index session.Index = h.mem
		tasks task.Store
	)
	if su.sqlite {
		db, err := sqlite.Open(t.Context(), filepath.Join(dir, ".state", "cadre.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		index, tasks = db, db
	}
	var (
		mbox  mailbox.Mailbox
		watch mailbox.TaskWatcher
	)
	if su.postgres != "" {
		// Opened before the harness's cleanups, so closed after its runs end.
		db := pgstore.Open(t, su.postgres)
		index, tasks, mbox, watch = db, db, db.Mailbox(), db
	}
	h.sessions = session.NewManagerWith(index, tr, func() time.Time { return fixedNow }, nil)
	h.base = make([]tool.Tool, 0, max(su.baseCap, 5))
	for _, f := range []struct {
		name   string
		access tool.Access
	}{{"Read", tool.AccessRead}, {"Grep", tool.AccessRead}, {"Glob", tool.AccessRead}, {"Edit", tool.AccessEdit}, {"Bash", tool.AccessExec}} {
		h.base = append(h.base, h.fakeTool(f.name, f.access))
	}
	now := su.now
	if now == nil {
		now = func() time.Time { return fixedNow }
	}
	svc, err := New(Config{
		Bus: h.bus, Now: now, Sessions: h.sessions, Index: index, Tasks: tasks, Agents: reg,
		Settings: su.subagents, Policy: h.policy, Resolve: h.resolve,
		// $1 in, $2 out per million tokens, for main-model and haiku.
		Pricing:   provider.Pricing{Overrides: map[string]provider.Price{"test:" + mainModel: {Input: 1, Output: 2}, "haiku": {Input: 1, Output: 2}}},
		BaseTools: func() []tool.Tool { return h.base }, MainCwd: dir,
		OutputDir:     filepath.Join(dir, ".state", "tasks"),
		ProgressEvery: cmp.Or(su.progressEvery, -1),
		Logger:        su.logger,
		Owner:         "process-a",
		Profile:       h.profile(su.subagents.Surface),
		Mailbox:       mbox, Watch: watch,
	})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if su.mailbox {
		svc.cfg.Mailbox = &queue.Mailbox{}
	}

	h.svc = svc
	h.group = NewGroup(context.Background())
	t.Cleanup(func() {
		// Every run of the test ends before goleak looks.
		h.group.Stop(nil)
		h.group.Wait()
	})
	h.mainID = "main-session-1"
	if err := index.CreateSession(context.Background(), session.Info{ID: h.mainID, Agent: "main", Cwd: dir}); err != nil {
		t.Fatal(err)
	}
	return h
}

// profile is the surface's tool profile (export_test.go).
func (h *harness) profile(surface string) NewProfile {
	h.t.Helper()
	if profileFor == nil {
		h.t.Fatal("no profiles: bridge_test.go did not hand them in")
	}
	p, err := profileFor(surface)
	if err != nil {
		h.t.Fatal(err)
	}
	return p
}

// fakeIn is every fake tool's input.
type fakeIn struct {
	FilePath string `json:"file_path,omitempty"`
	Command  string `json:"command,omitempty"`
}

func (h *harness) fakeTool(name string, access tool.Access) tool.Tool {
	t := tool.New(tool.Info{Name: name, Description: "fake " + name, Access: access, ConcurrencySafe: access == tool.AccessRead},
		func(_ context.Context, env tool.Env, in fakeIn) (tool.Result, error) {
			target := in.FilePath + in.Command
			h.mu.Lock()
			h.calls = append(h.calls, fakeCall{Tool: name, Target: target, Cwd: env.Cwd, SessionID: env.SessionID})
			h.mu.Unlock()
			return tool.Text(name + " ran on " + target), nil
		})
	t.TargetOf = func(_ tool.Env, in fakeIn) string { return in.FilePath + in.Command }
	return t
}

func (h *harness) resolve(name string) (llm.Model, provider.Ref, error) {
	if !slices.Contains(knownModels, name) {
		return nil, provider.Ref{}, &llm.Error{Kind: llm.ErrConfig, Message: fmt.Sprintf("unknown model %q", name)}
	}
	return h.model(name), provider.Ref{Provider: "test", Model: name}, nil
}

func (h *harness) model(name string) llm.Model {
	return &llm.ModelFunc{ID: name, Func: func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		r := *req
		r.Messages = slices.Clone(req.Messages)
		r.Tools = slices.Clone(req.Tools)
		h.mu.Lock()
		h.requests = append(h.requests, recorded{model: name, req: r})
		h.mu.Unlock()
		return h.script(ctx, name, req)
	}}
}

// mainCaller is the main agent as run.go builds it.
func (h *harness) mainCaller() Caller {
	return Caller{
		RootSessionID: h.mainID, SessionID: h.mainID, Agent: "main",
		Model: h.model(mainModel), Ref: provider.Ref{Provider: "test", Model: mainModel},
		Mode: h.policy.Mode, Cwd: h.dir, Totals: &runner.Totals{}, Group: h.group,
	}
}

// spawnTool is the caller's spawn tool: Agent, or task on the opencode
// surface.
func (h *harness) spawnTool(c Caller) tool.Tool {
	h.t.Helper()
	tools := h.svc.Tools(c)
	for _, t := range tools {
		if isSpawnTool(t.Info().Name) {
			return t
		}
	}
	h.t.Fatalf("caller %s at depth %d has no spawn tool among %v", c.Agent, c.Depth, names(tools))
	return nil
}

func isSpawnTool(name string) bool { return name == "Agent" || name == "task" }

// spawnTools counts the spawn tools among tools.
func spawnTools(tools []tool.Tool) int {
	n := 0
	for _, t := range tools {
		if isSpawnTool(t.Info().Name) {
			n++
		}
	}
	return n
}

// call calls the caller's spawn tool directly, as the loop would: input
// checked against the schema, the tool_use id in the Env.
func (h *harness) call(ctx context.Context, c Caller, toolUseID string, in any) (tool.Result, error) {
	h.t.Helper()
	st := h.spawnTool(c)
	raw, err := json.Marshal(in)
	if err != nil {
		h.t.Fatal(err)
	}
	set, err := tool.NewSet(st)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := set.Validate(st.Info().Name, raw); err != nil {
		h.t.Fatalf("input %s does not fit the %s tool's schema: %v", raw, st.Info().Name, err)
	}
	return st.Call(ctx, tool.Env{Cwd: c.Cwd, SessionID: c.SessionID, ToolUseID: toolUseID}, raw)
}

// mustCall is call for calls that must not fail as Go errors.
func (h *harness) mustCall(c Caller, toolUseID string, in any) tool.Result {
	h.t.Helper()
	res, err := h.call(context.Background(), c, toolUseID, in)
	if err != nil {
		h.t.Fatalf("spawn tool returned an error: %v", err)
	}
	return res
}

// runMain runs a fake main agent through the real loop and runner, as
// run.go does, in a new main session.
func (h *harness) runMain(ctx context.Context, prompt string) (*runner.Result, Caller) {
	h.t.Helper()
	sess, err := h.sessions.Create(ctx, session.Info{Agent: "main", Cwd: h.dir, Title: "test"})
	if err != nil {
		h.t.Fatal(err)
	}
	c := h.mainCaller()
	c.RootSessionID, c.SessionID = sess.Info.ID, sess.Info.ID
	all, err := tool.NewSet(append(slices.Clone(h.base), h.svc.Tools(c)...)...)
	if err != nil {
		h.t.Fatal(err)
	}
	res := runner.Run(ctx, runner.Spec{
		Session: sess,
		Loop: loop.Config{
			Model: c.Model, System: "You are the main agent.", Tools: h.policy.Pool(all), Permit: &h.policy,
			SystemContext: func(ctx context.Context) string { return h.svc.SystemContext(ctx, c) }, Agent: "main",
			Env: tool.Env{Cwd: h.dir, SessionID: sess.Info.ID},
		},
		Tag:    runner.Tag{RootSessionID: sess.Info.ID},
		Totals: c.Totals,
		Bus:    h.bus,
		Now:    func() time.Time { return fixedNow },
	}, nil, llm.UserText(prompt))
	return res, c
}

// requestsOf returns the recorded requests of one agent type, in order.
func (h *harness) requestsOf(agentType string) []recorded {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []recorded
	for _, r := range h.requests {
		if r.req.Agent == agentType {
			out = append(out, r)
		}
	}
	return out
}

// firstRequest is the first request an agent type made.
func (h *harness) firstRequest(agentType string) recorded {
	h.t.Helper()
	rs := h.requestsOf(agentType)
	if len(rs) == 0 {
		h.t.Fatalf("agent %q never called its model", agentType)
	}
	return rs[0]
}

func (h *harness) toolCalls() []fakeCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.calls)
}

// collector gathers bus events on its own goroutine until stopped.
type collector struct {
	sub  *event.Sub
	done chan []event.Event
}

func (h *harness) collect() *collector {
	c := &collector{sub: h.bus.Subscribe(nil), done: make(chan []event.Event, 1)}
	go func() {
		var evs []event.Event
		for e := range c.sub.Events(context.Background()) {
			evs = append(evs, e)
		}
		c.done <- evs
	}()
	return c
}

// stop closes the subscription and returns what it delivered.
func (c *collector) stop(t *testing.T) []event.Event {
	t.Helper()
	c.sub.Close()
	select {
	case evs := <-c.done:
		return evs
	case <-time.After(waitFor):
		t.Fatal("event collector did not finish")
		return nil
	}
}

// --- script helpers ---

func reply(text string) *llm.Response {
	r := llm.Reply(llm.Text(text))
	r.Usage = llm.Usage{InputTokens: 10, OutputTokens: 5}
	return r
}

func replyBlocks(blocks ...llm.Block) *llm.Response {
	r := llm.Reply(blocks...)
	r.Usage = llm.Usage{InputTokens: 10, OutputTokens: 5}
	return r
}

func use(id, name string, in any) llm.Block {
	raw, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	return llm.ToolUse(id, name, raw)
}

// turn is how many assistant messages the request's conversation already
// holds: 0 on an agent's first call.
func turn(req *llm.Request) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == llm.RoleAssistant {
			n++
		}
	}
	return n
}

// lastToolResult is the text of the last tool_result in the request.
func lastToolResult(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		for _, b := range slices.Backward(req.Messages[i].Content) {
			if b.Type == llm.BlockToolResult {
				return b.ResultText()
			}
		}
	}
	return ""
}

// firstUserText is the text of the request's first user message.
func firstUserText(req *llm.Request) string {
	for _, m := range req.Messages {
		if m.Role == llm.RoleUser {
			return m.Text()
		}
	}
	return ""
}

func resultText(r tool.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func names(tools []tool.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Info().Name
	}
	return out
}

func specNames(specs []llm.ToolSpec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Name
	}
	return out
}

func envFor(c Caller, toolUseID string) tool.Env {
	return tool.Env{Cwd: c.Cwd, SessionID: c.SessionID, ToolUseID: toolUseID}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
