package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre/llm"
)

func TestZeroTracerStartsNothing(t *testing.T) {
	var tr Tracer
	if tr.Enabled() || New(nil, "1").Enabled() {
		t.Fatal("the zero Tracer, or one from a nil provider, says it is enabled")
	}
	// A span the caller's context carries must come back untouched: the
	// zero Span must not end it.
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	ctx, outer := tp.Tracer("caller").Start(context.Background(), "caller")
	got, s := tr.StartRun(ctx, Run{Agent: "main"})
	if got != ctx {
		t.Error("StartRun on the zero Tracer changed the context")
	}
	s.EndRun(llm.Usage{}, errors.New("x"))
	_, s = tr.StartChat(ctx, Chat{Model: "a:b"})
	s.EndChat(nil, errors.New("x"))
	_, s = tr.StartTool(ctx, Tool{Name: "Read"})
	s.EndTool(ToolFailed)
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans ended through the zero Tracer", n)
	}
	outer.End()
}

func TestSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr := New(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)), "9.9")
	temp := 0.5
	overloaded := fmt.Errorf("stream: %w", &llm.Error{Kind: llm.ErrOverloaded, Message: "busy"})
	tests := []struct {
		name      string
		run       func()
		span      string
		attrs     map[attribute.Key]any
		errorType string
	}{
		{
			name: "chat", span: "chat claude-x",
			run: func() {
				_, s := tr.StartChat(context.Background(), Chat{Model: "anthropic:claude-x", Agent: "main", SessionID: "s1", MaxTokens: 100, Temperature: &temp})
				s.EndChat(&llm.Response{ID: "msg_1", Model: "claude-x-2026", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 1, OutputTokens: 2, CacheReadInputTokens: 3, CacheCreationInputTokens: 4}}, nil)
			},
			attrs: map[attribute.Key]any{
				KeyOperation: "chat", KeyProvider: "anthropic", KeySystem: "anthropic", KeyRequestModel: "claude-x",
				KeyResponseModel: "claude-x-2026", KeyResponseID: "msg_1", KeyMaxTokens: int64(100), KeyTemperature: 0.5,
				KeyInputTokens: int64(8), KeyOutputTokens: int64(2), KeyCacheRead: int64(3), KeyCacheCreation: int64(4),
				KeyFinishReasons: []string{"end_turn"}, KeyAgentName: "main", KeyConversation: "s1",
			},
		},
		{
			name: "failed chat", span: "chat m", errorType: "overloaded",
			run: func() {
				_, s := tr.StartChat(context.Background(), Chat{Model: "openai:m"})
				s.EndChat(nil, overloaded)
			},
			attrs: map[attribute.Key]any{KeyProvider: "openai", KeyRequestModel: "m"},
		},
		{
			name: "run", span: "invoke_agent explorer", errorType: "canceled",
			run: func() {
				_, s := tr.StartRun(context.Background(), Run{Agent: "explorer", SessionID: "s2", Model: "bare-model"})
				s.EndRun(llm.Usage{InputTokens: 7}, fmt.Errorf("run: %w", context.Canceled))
			},
			attrs: map[attribute.Key]any{
				KeyOperation: "invoke_agent", KeyAgentName: "explorer", KeyConversation: "s2", KeyAgentID: "s2",
				KeyRequestModel: "bare-model", KeyInputTokens: int64(7),
			},
		},
		{
			name: "teammate run", span: "invoke_agent tester",
			run: func() {
				_, s := tr.StartRun(context.Background(), Run{Agent: "tester", SessionID: "s3", Teammate: "bob", Team: "default"})
				s.EndRun(llm.Usage{}, nil)
			},
			attrs: map[attribute.Key]any{KeyAgentName: "tester", KeyTeammate: "bob", KeyTeam: "default"},
		},
		{
			name: "mcp tool denied", span: "execute_tool mcp__fs__write", errorType: ToolDenied,
			run: func() {
				_, s := tr.StartTool(context.Background(), Tool{Name: "mcp__fs__write", CallID: "toolu_1"})
				s.EndTool(ToolDenied)
			},
			attrs: map[attribute.Key]any{KeyOperation: "execute_tool", KeyToolName: "mcp__fs__write", KeyToolCallID: "toolu_1", KeyToolType: "extension"},
		},
		{
			name: "tool", span: "execute_tool Read",
			run: func() {
				_, s := tr.StartTool(context.Background(), Tool{Name: "Read", CallID: "toolu_2"})
				s.EndTool("")
			},
			attrs: map[attribute.Key]any{KeyToolName: "Read", KeyToolType: "function"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp.Reset()
			tt.run()
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans, want 1", len(spans))
			}
			s := spans[0]
			if s.Name != tt.span {
				t.Errorf("name = %q, want %q", s.Name, tt.span)
			}
			if s.InstrumentationScope.Name != Scope || s.InstrumentationScope.Version != "9.9" {
				t.Errorf("scope = %+v", s.InstrumentationScope)
			}
			got := map[attribute.Key]any{}
			for _, kv := range s.Attributes {
				got[kv.Key] = kv.Value.AsInterface()
			}
			for k, want := range tt.attrs {
				if fmt.Sprint(got[k]) != fmt.Sprint(want) {
					t.Errorf("%s = %v, want %v", k, got[k], want)
				}
			}
			if tt.errorType == "" {
				if s.Status.Code == codes.Error {
					t.Errorf("status = %v, want no error", s.Status)
				}
				return
			}
			if s.Status.Code != codes.Error || got[KeyErrorType] != tt.errorType {
				t.Errorf("status = %v, error.type = %v; want an error of type %s", s.Status, got[KeyErrorType], tt.errorType)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	tp := sdktrace.NewTracerProvider()
	parent, span := tp.Tracer("t").Start(context.Background(), "call")
	defer span.End()
	detached, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := Within(detached, parent)
	if got := trace.SpanContextFromContext(ctx); !got.Equal(span.SpanContext()) {
		t.Errorf("Within carried %v, want the call's %v", got, span.SpanContext())
	}
	if Within(detached, context.Background()) != detached {
		t.Error("Within without a span in from changed ctx")
	}
	cancel()
	if ctx.Err() == nil {
		t.Error("Within's context does not end with ctx")
	}
}

func TestOneLine(t *testing.T) {
	long := strings.Repeat("é", 400)
	got := oneLine("first\nsecond")
	if got != "first" {
		t.Errorf("oneLine = %q", got)
	}
	if got := oneLine(long); len(got) > 310 || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Errorf("oneLine cut %d bytes to %q", len(long), got)
	}
}
