package telemetry

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/cadre-dev/cadre/llm"
)

// Scope is the instrumentation scope cadre's spans carry.
const Scope = "github.com/cadre-dev/cadre"

// The attribute keys, from the OpenTelemetry GenAI semantic conventions
// (gen_ai.*) and the general ones (error.type). They are spelled out here
// rather than taken from a semconv package: those packages initialise
// thousands of values when the program starts, and the GenAI keys move
// between their versions.
const (
	KeyOperation     = attribute.Key("gen_ai.operation.name")
	KeyProvider      = attribute.Key("gen_ai.provider.name")
	KeySystem        = attribute.Key("gen_ai.system") // the provider's older key, still read by many backends
	KeyRequestModel  = attribute.Key("gen_ai.request.model")
	KeyMaxTokens     = attribute.Key("gen_ai.request.max_tokens")
	KeyTemperature   = attribute.Key("gen_ai.request.temperature")
	KeyResponseModel = attribute.Key("gen_ai.response.model")
	KeyResponseID    = attribute.Key("gen_ai.response.id")
	KeyFinishReasons = attribute.Key("gen_ai.response.finish_reasons")
	KeyInputTokens   = attribute.Key("gen_ai.usage.input_tokens")
	KeyOutputTokens  = attribute.Key("gen_ai.usage.output_tokens")
	KeyCacheRead     = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	KeyCacheCreation = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	KeyAgentName     = attribute.Key("gen_ai.agent.name")
	KeyAgentID       = attribute.Key("gen_ai.agent.id")
	KeyConversation  = attribute.Key("gen_ai.conversation.id")
	KeyToolName      = attribute.Key("gen_ai.tool.name")
	KeyToolCallID    = attribute.Key("gen_ai.tool.call.id")
	KeyToolType      = attribute.Key("gen_ai.tool.type")
	KeyErrorType     = attribute.Key("error.type")
	// cadre's own, for a teammate's run (DESIGN S-A6): its name on the
	// team, and the team's.
	KeyTeammate = attribute.Key("cadre.teammate.name")
	KeyTeam     = attribute.Key("cadre.team.name")
)

// The operation names (gen_ai.operation.name), which also begin the span
// names.
const (
	OpInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	OpExecuteTool = "execute_tool"
)

// The error.type values of a tool call that did not succeed.
const (
	// ToolDenied: a permission rule, the approver or a PreToolUse hook
	// refused the call.
	ToolDenied = "denied"
	// ToolFailed: the call ran, or could not run (bad input, no such
	// tool, interrupted), and its result is an error.
	ToolFailed = "tool_error"
)

// Tracer starts cadre's spans. The zero Tracer starts none: its methods
// return the context unchanged and a Span that does nothing.
type Tracer struct{ t trace.Tracer }

// New returns a Tracer on tp's tracer for cadre's scope; a nil tp gives
// the zero Tracer.
func New(tp trace.TracerProvider, version string) Tracer {
	if tp == nil {
		return Tracer{}
	}
	return Tracer{tp.Tracer(Scope, trace.WithInstrumentationVersion(version))}
}

// Enabled reports whether t starts spans.
func (t Tracer) Enabled() bool { return t.t != nil }

// Span is one of cadre's spans. The zero Span does nothing; End methods
// are meant to be called once.
type Span struct{ s trace.Span }

// Run is an agent run: the main agent's turn or a subagent's run.
type Run struct {
	// Agent is "main" or the subagent's type.
	Agent string
	// SessionID is the agent's session (gen_ai.conversation.id); a
	// subagent's is also its agent id.
	SessionID string
	// Model is the agent's model, "provider:model".
	Model string
	// Teammate and Team are a teammate's name and its team's; "" for
	// every other run.
	Teammate, Team string
}

// StartRun starts an invoke_agent span, the child of the span in ctx (a
// subagent's: its Agent call's).
func (t Tracer) StartRun(ctx context.Context, r Run) (context.Context, Span) {
	if t.t == nil {
		return ctx, Span{}
	}
	attrs := []attribute.KeyValue{KeyOperation.String(OpInvokeAgent), KeyAgentName.String(r.Agent)}
	if r.SessionID != "" {
		attrs = append(attrs, KeyConversation.String(r.SessionID), KeyAgentID.String(r.SessionID))
	}
	attrs = append(attrs, modelAttrs(r.Model)...)
	if r.Teammate != "" {
		attrs = append(attrs, KeyTeammate.String(r.Teammate), KeyTeam.String(r.Team))
	}
	ctx, s := t.t.Start(ctx, OpInvokeAgent+" "+r.Agent, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, Span{s}
}

// EndRun ends a run span with the run's usage and, when it failed, err.
func (s Span) EndRun(u llm.Usage, err error) {
	if s.s == nil {
		return
	}
	s.s.SetAttributes(usageAttrs(u)...)
	if err != nil {
		s.s.SetAttributes(KeyErrorType.String(errorType(err)))
		s.s.SetStatus(codes.Error, oneLine(err.Error()))
	}
	s.s.End()
}

// Chat is one model call.
type Chat struct {
	// Model is "provider:model" (llm.Model's Name).
	Model     string
	Agent     string
	SessionID string
	MaxTokens int64
	// Temperature is nil when the model's default is used.
	Temperature *float64
}

// StartChat starts a chat span (SpanKind client: the model is another
// service).
func (t Tracer) StartChat(ctx context.Context, c Chat) (context.Context, Span) {
	if t.t == nil {
		return ctx, Span{}
	}
	attrs := append([]attribute.KeyValue{KeyOperation.String(OpChat)}, modelAttrs(c.Model)...)
	if c.Agent != "" {
		attrs = append(attrs, KeyAgentName.String(c.Agent))
	}
	if c.SessionID != "" {
		attrs = append(attrs, KeyConversation.String(c.SessionID))
	}
	if c.MaxTokens > 0 {
		attrs = append(attrs, KeyMaxTokens.Int64(c.MaxTokens))
	}
	if c.Temperature != nil {
		attrs = append(attrs, KeyTemperature.Float64(*c.Temperature))
	}
	_, model := splitModel(c.Model)
	ctx, s := t.t.Start(ctx, OpChat+" "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, Span{s}
}

// EndChat ends a chat span with the response, or with err when the call
// failed.
func (s Span) EndChat(resp *llm.Response, err error) {
	if s.s == nil {
		return
	}
	if resp != nil {
		if resp.Model != "" {
			s.s.SetAttributes(KeyResponseModel.String(resp.Model))
		}
		if resp.ID != "" {
			s.s.SetAttributes(KeyResponseID.String(resp.ID))
		}
		if resp.StopReason != "" {
			s.s.SetAttributes(KeyFinishReasons.StringSlice([]string{string(resp.StopReason)}))
		}
		s.s.SetAttributes(usageAttrs(resp.Usage)...)
	}
	if err != nil {
		s.s.SetAttributes(KeyErrorType.String(errorType(err)))
		s.s.SetStatus(codes.Error, oneLine(err.Error()))
	}
	s.s.End()
}

// Tool is one tool call.
type Tool struct {
	Name, CallID string
	Agent        string
	SessionID    string
}

// StartTool starts an execute_tool span.
func (t Tracer) StartTool(ctx context.Context, c Tool) (context.Context, Span) {
	if t.t == nil {
		return ctx, Span{}
	}
	kind := "function"
	if strings.HasPrefix(c.Name, "mcp__") {
		kind = "extension" // an MCP server's: run outside cadre
	}
	attrs := []attribute.KeyValue{
		KeyOperation.String(OpExecuteTool), KeyToolName.String(c.Name), KeyToolCallID.String(c.CallID), KeyToolType.String(kind),
	}
	if c.Agent != "" {
		attrs = append(attrs, KeyAgentName.String(c.Agent))
	}
	if c.SessionID != "" {
		attrs = append(attrs, KeyConversation.String(c.SessionID))
	}
	ctx, s := t.t.Start(ctx, OpExecuteTool+" "+c.Name, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	return ctx, Span{s}
}

// EndTool ends a tool span; failure is "" for a call that succeeded, else
// ToolDenied or ToolFailed. The result's text is not recorded: it is the
// conversation's content.
func (s Span) EndTool(failure string) {
	if s.s == nil {
		return
	}
	if failure != "" {
		s.s.SetAttributes(KeyErrorType.String(failure))
		desc := "the tool call failed"
		if failure == ToolDenied {
			desc = "the tool call was denied"
		}
		s.s.SetStatus(codes.Error, desc)
	}
	s.s.End()
}

// splitModel splits "provider:model"; a name without a provider has none.
func splitModel(name string) (provider, model string) {
	if p, m, ok := strings.Cut(name, ":"); ok {
		return p, m
	}
	return "", name
}

func modelAttrs(name string) []attribute.KeyValue {
	if name == "" {
		return nil
	}
	provider, model := splitModel(name)
	attrs := []attribute.KeyValue{KeyRequestModel.String(model)}
	if provider != "" {
		attrs = append(attrs, KeyProvider.String(provider), KeySystem.String(provider))
	}
	return attrs
}

// usageAttrs are u as the conventions count it: input tokens include the
// cached ones, which are also given apart.
func usageAttrs(u llm.Usage) []attribute.KeyValue {
	attrs := []attribute.KeyValue{
		KeyInputTokens.Int64(u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens),
		KeyOutputTokens.Int64(u.OutputTokens),
	}
	if u.CacheReadInputTokens > 0 {
		attrs = append(attrs, KeyCacheRead.Int64(u.CacheReadInputTokens))
	}
	if u.CacheCreationInputTokens > 0 {
		attrs = append(attrs, KeyCacheCreation.Int64(u.CacheCreationInputTokens))
	}
	return attrs
}

// errorType is error.type for err: a provider failure's kind
// (rate_limit, overloaded, …), context cancellation's name, else "_OTHER"
// as the conventions ask when there is no better one.
func errorType(err error) string {
	if le, ok := errors.AsType[*llm.Error](err); ok && le.Kind != "" {
		return string(le.Kind)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline_exceeded"
	}
	return "_OTHER"
}

// oneLine is the first line of s, cut to a length a trace view shows.
func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	const max = 300
	if len(s) > max {
		s = s[:max]
		for !utf8.ValidString(s) { // not in the middle of a character
			s = s[:len(s)-1]
		}
		s += "…"
	}
	return s
}

// Within returns ctx carrying the span context of the span in from, when
// there is one: a run whose context is detached from the call that started
// it (a subagent lives as long as its group, not as long as its Agent
// call) stays that call's child in the trace. Only the span's identity is
// carried, not the span, so a background run that outlives the call holds
// nothing of it; OpenTelemetry allows a child to end after its parent.
func Within(ctx, from context.Context) context.Context {
	sc := trace.SpanContextFromContext(from)
	if !sc.IsValid() {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, sc)
}
