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

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// spanTree indexes ended spans by id for walking parent to children.
type spanTree struct {
	spans []tracetest.SpanStub
	byID  map[trace.SpanID]tracetest.SpanStub
}

func newSpanTree(spans []tracetest.SpanStub) spanTree {
	st := spanTree{spans: spans, byID: map[trace.SpanID]tracetest.SpanStub{}}
	for _, s := range spans {
		st.byID[s.SpanContext.SpanID()] = s
	}
	return st
}

// children are the spans whose parent is p, in start order.
func (st spanTree) children(p tracetest.SpanStub) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range st.spans {
		if s.Parent.SpanID() == p.SpanContext.SpanID() && s.Parent.TraceID() == p.SpanContext.TraceID() {
			out = append(out, s)
		}
	}
	slices.SortStableFunc(out, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	return out
}

func names(spans []tracetest.SpanStub) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

func attr(s tracetest.SpanStub, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func str(s tracetest.SpanStub, key string) string {
	v, _ := attr(s, key)
	return v.AsString()
}

// TestTracingSpanTree runs a main agent that starts two subagents in one
// message, one in the foreground and one in the background, against an
// in-memory exporter, and checks the tree of spans (docs/tracing.md):
//
//	invoke_agent main
//	├── chat model
//	├── execute_tool Agent ── invoke_agent general-purpose (foreground)
//	│                         ├── chat model
//	│                         ├── execute_tool Bash (denied)
//	│                         └── chat model
//	├── execute_tool Agent ── invoke_agent general-purpose (background)
//	│                         ├── chat model
//	│                         ├── execute_tool Read (failed)
//	│                         └── chat model
//	└── chat model
//
// The background child is held until the main agent's next model call, so
// its run span ends after the Agent call's span it is the child of.
func TestTracingSpanTree(t *testing.T) {
	f := newFixture(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())

	missing := filepath.Join(f.dir, "missing.txt")
	var (
		mainAgain = make(chan struct{}) // the main agent's second model call began
		againOnce sync.Once
	)
	usage := llm.Usage{InputTokens: 10, OutputTokens: 5, CacheReadInputTokens: 3}
	reply := func(blocks ...llm.Block) *llm.Response {
		r := llm.Reply(blocks...)
		r.Model, r.Usage = "model-2026", usage
		return r
	}
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if req.Agent == "main" {
			switch {
			case len(req.Messages) == 1:
				return reply(
					llm.ToolUse("toolu_fg", "Agent", json.RawMessage(`{"description":"fg","prompt":"foreground work"}`)),
					llm.ToolUse("toolu_bg", "Agent", json.RawMessage(`{"description":"bg","prompt":"background work","run_in_background":true}`)),
				), nil
			case strings.Contains(last.Text(), "<task-notification>"):
				return reply(llm.Text("all done")), nil
			}
			againOnce.Do(func() { close(mainAgain) })
			return reply(llm.Text("waiting for the background agent")), nil
		}
		first := req.Messages[0].Text()
		if len(req.Messages) > 1 {
			return reply(llm.Text("child done")), nil
		}
		if strings.Contains(first, "background work") {
			select {
			case <-mainAgain:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return reply(llm.ToolUse("toolu_read", "Read", json.RawMessage(fmt.Sprintf(`{"file_path":%q}`, missing)))), nil
		}
		return reply(llm.ToolUse("toolu_rm", "Bash", json.RawMessage(`{"command":"rm -rf build"}`))), nil
	}
	rt := f.open(t, cadre.Options{TracerProvider: tp, DisallowedTools: []string{"Bash(rm:*)"}})
	var sessionID string
	for ev, err := range rt.Run(t.Context(), cadre.Request{Prompt: "delegate"}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == cadre.EventResult && ev.ParentToolUseID == "" {
			sessionID = ev.SessionID
			if ev.Result.IsError {
				t.Fatalf("the run failed: %v", ev.Result.Errors)
			}
		}
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	st := newSpanTree(exp.GetSpans())

	var roots []tracetest.SpanStub
	for _, s := range st.spans {
		if !s.Parent.IsValid() {
			roots = append(roots, s)
		}
	}
	// Two turns: the prompt's, and the one answering the notification.
	if got := names(roots); !slices.Equal(got, []string{"invoke_agent main", "invoke_agent main"}) {
		t.Fatalf("root spans = %q, want two main turns", got)
	}
	slices.SortFunc(roots, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	turn := roots[0]
	for k, want := range map[string]string{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "main", "gen_ai.conversation.id": sessionID,
		"gen_ai.provider.name": "test", "gen_ai.request.model": "model",
	} {
		if got := str(turn, k); got != want {
			t.Errorf("main run span: %s = %q, want %q", k, got, want)
		}
	}
	kids := st.children(turn)
	if got, want := names(kids), []string{"chat model", "execute_tool Agent", "execute_tool Agent", "chat model"}; !slices.Equal(sortedMiddle(got), sortedMiddle(want)) {
		t.Fatalf("children of the main run span = %q, want %q", got, want)
	}
	chat := kids[0]
	for k, want := range map[string]string{
		"gen_ai.operation.name": "chat", "gen_ai.provider.name": "test", "gen_ai.system": "test",
		"gen_ai.request.model": "model", "gen_ai.response.model": "model-2026", "gen_ai.agent.name": "main",
		"gen_ai.conversation.id": sessionID,
	} {
		if got := str(chat, k); got != want {
			t.Errorf("chat span: %s = %q, want %q", k, got, want)
		}
	}
	if chat.SpanKind != trace.SpanKindClient {
		t.Errorf("chat span kind = %v, want client", chat.SpanKind)
	}
	if v, _ := attr(chat, "gen_ai.usage.input_tokens"); v.AsInt64() != 13 {
		t.Errorf("gen_ai.usage.input_tokens = %v, want 13 (10 and 3 read from the cache)", v.String())
	}
	if v, _ := attr(chat, "gen_ai.usage.output_tokens"); v.AsInt64() != 5 {
		t.Errorf("gen_ai.usage.output_tokens = %v, want 5", v.String())
	}
	if v, _ := attr(chat, "gen_ai.response.finish_reasons"); !slices.Equal(v.AsStringSlice(), []string{"tool_use"}) {
		t.Errorf("gen_ai.response.finish_reasons = %v, want [tool_use]", v.String())
	}

	calls := map[string]tracetest.SpanStub{}
	for _, s := range kids {
		if s.Name == "execute_tool Agent" {
			calls[str(s, "gen_ai.tool.call.id")] = s
			if str(s, "gen_ai.tool.name") != "Agent" || s.Status.Code == codes.Error {
				t.Errorf("Agent call span %s: tool name %q, status %v", s.Name, str(s, "gen_ai.tool.name"), s.Status)
			}
		}
	}
	for _, tc := range []struct {
		call, tool, errorType string
	}{
		{"toolu_fg", "Bash", "denied"},
		{"toolu_bg", "Read", "tool_error"},
	} {
		call, ok := calls[tc.call]
		if !ok {
			t.Fatalf("no execute_tool span for %s among %q", tc.call, names(kids))
		}
		runs := st.children(call)
		if len(runs) != 1 || runs[0].Name != "invoke_agent general-purpose" {
			t.Fatalf("children of the %s Agent call span = %q, want the subagent's run span", tc.call, names(runs))
		}
		run := runs[0]
		if id := str(run, "gen_ai.conversation.id"); id == "" || id == sessionID {
			t.Errorf("%s: the child's run span has conversation id %q, want its own session's", tc.call, id)
		}
		if tc.call == "toolu_bg" && !run.EndTime.After(call.EndTime) {
			t.Errorf("the background run span ended at %v, not after its Agent call's span (%v): the test did not hold it", run.EndTime, call.EndTime)
		}
		steps := st.children(run)
		if got, want := names(steps), []string{"chat model", "execute_tool " + tc.tool, "chat model"}; !slices.Equal(got, want) {
			t.Fatalf("%s: children of the child's run span = %q, want %q", tc.call, got, want)
		}
		for _, s := range steps {
			if got := str(s, "gen_ai.agent.name"); got != "general-purpose" {
				t.Errorf("%s: %s has gen_ai.agent.name %q", tc.call, s.Name, got)
			}
		}
		toolSpan := steps[1]
		if toolSpan.Status.Code != codes.Error || str(toolSpan, "error.type") != tc.errorType {
			t.Errorf("%s: %s span status %v, error.type %q; want an error of type %s", tc.call, tc.tool, toolSpan.Status, str(toolSpan, "error.type"), tc.errorType)
		}
		if str(toolSpan, "gen_ai.tool.name") != tc.tool || str(toolSpan, "gen_ai.tool.call.id") == "" {
			t.Errorf("%s: tool span attributes %v", tc.call, toolSpan.Attributes)
		}
		if run.Status.Code == codes.Error {
			t.Errorf("%s: the child's run span has error status %v; the run succeeded", tc.call, run.Status)
		}
	}
	// Every span of the first turn, the background run's included, is in
	// its trace; the second turn has one of its own.
	for _, s := range st.spans {
		if s.SpanContext.TraceID() != turn.SpanContext.TraceID() && s.SpanContext.TraceID() != roots[1].SpanContext.TraceID() {
			t.Errorf("span %s is in neither turn's trace", s.Name)
		}
	}
	if got := names(st.children(roots[1])); !slices.Equal(got, []string{"chat model"}) {
		t.Errorf("children of the second turn's span = %q, want one chat", got)
	}
}

// sortedMiddle sorts all but the first and last names: calls of one
// message run at the same time, so they start in any order.
func sortedMiddle(names []string) []string {
	out := slices.Clone(names)
	if len(out) > 2 {
		slices.Sort(out[1 : len(out)-1])
	}
	return out
}

// TestTracingOffByDefault: with no TracerProvider a run makes no span, and
// a span the caller's context carries is neither ended nor given children.
func TestTracingOffByDefault(t *testing.T) {
	f := newFixture(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	ctx, outer := tp.Tracer("caller").Start(t.Context(), "caller")
	rt := f.open(t, cadre.Options{})
	for _, err := range rt.Run(ctx, cadre.Request{Prompt: "read the notes"}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans ended without a TracerProvider: %q", n, names(exp.GetSpans()))
	}
	outer.End()
	if got := names(exp.GetSpans()); !slices.Equal(got, []string{"caller"}) {
		t.Fatalf("spans = %q, want only the caller's", got)
	}
}

// TestTracingCallerSpanIsParent: a span in the context given to Run is the
// parent of the turn's span, so an application's trace holds cadre's runs.
func TestTracingCallerSpanIsParent(t *testing.T) {
	f := newFixture(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	ctx, outer := tp.Tracer("caller").Start(t.Context(), "caller")
	rt := f.open(t, cadre.Options{TracerProvider: tp})
	for _, err := range rt.Run(ctx, cadre.Request{Prompt: "read the notes"}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	outer.End()
	st := newSpanTree(exp.GetSpans())
	caller := st.byID[outer.SpanContext().SpanID()]
	if got := names(st.children(caller)); !slices.Equal(got, []string{"invoke_agent main"}) {
		t.Fatalf("children of the caller's span = %q, want the turn's", got)
	}
	if got := names(st.children(st.children(caller)[0])); !slices.Equal(got, []string{"chat model", "execute_tool Read", "chat model"}) {
		t.Errorf("children of the turn = %q", got)
	}
}

// A teammate's run span names it and its team (issue 26: OTel spans for
// teammates).
func TestTracingTeammateSpan(t *testing.T) {
	f := newFixture(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent != "main" {
			return llm.Reply(llm.Text("teammate done")), nil
		}
		last := req.Messages[len(req.Messages)-1].Text()
		switch {
		case len(req.Messages) == 1:
			return llm.Reply(llm.ToolUse("toolu_mate", "Agent", json.RawMessage(`{"description":"help","prompt":"team work","name":"alice"}`))), nil
		case strings.Contains(last, "alice"):
			return llm.Reply(llm.Text("thanks, alice")), nil
		}
		return llm.Reply(llm.Text("waiting for alice")), nil
	}
	if err := os.WriteFile(filepath.Join(f.home, "settings.json"), []byte(`{"subagents": {"teams": true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := f.open(t, cadre.Options{TracerProvider: tp})
	for _, err := range rt.Run(t.Context(), cadre.Request{Prompt: "work as a team"}) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, s := range exp.GetSpans() {
		if s.Name == "invoke_agent general-purpose" {
			found = true
			if str(s, "cadre.teammate.name") != "alice" || str(s, "cadre.team.name") != "default" {
				t.Errorf("the teammate's run span: teammate %q, team %q; want alice, default", str(s, "cadre.teammate.name"), str(s, "cadre.team.name"))
			}
		}
	}
	if !found {
		t.Errorf("no run span of the teammate among %q", names(exp.GetSpans()))
	}
}
