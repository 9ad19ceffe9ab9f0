package loop

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// TestTracing: each model call and each tool call is a span, children of
// the span in the run's context; a call that failed or was denied, and a
// model call that failed, have error status and error.type.
func TestTracing(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tracer := telemetry.New(tp, "test")
	crash := tool.New(tool.Info{Name: "Crash", Description: "panics", Access: tool.AccessRead},
		func(context.Context, tool.Env, echoIn) (tool.Result, error) { panic("boom") })
	model := scripted(
		&llm.Response{Message: llm.Message{Content: []llm.Block{
			use("t1", "Echo", `{"text":"a"}`), use("t2", "Crash", `{"text":"b"}`),
			use("t3", "Missing", `{}`), use("t4", "Secret", `{"text":"c"}`),
		}}},
		// A second call fails: no reply scripted.
	)
	model.ID = "anthropic:claude-x"
	deny := permitFunc(func(name string, _ json.RawMessage) error {
		if name == "Secret" {
			return errors.New("denied by a rule")
		}
		return nil
	})
	ctx, run := tp.Tracer("test").Start(context.Background(), "run")
	_, err := Run(ctx, Config{
		Model: model, Tools: set(t, echo("Echo", false, nil), crash, echo("Secret", false, nil)), Permit: deny,
		Agent: "main", Env: tool.Env{SessionID: "s1"}, Tracer: tracer,
	}, []llm.Message{llm.UserText("go")})
	if err == nil {
		t.Fatal("the second model call did not fail")
	}
	run.End()
	type want struct {
		name, errorType string
	}
	var got []want
	for _, s := range exp.GetSpans() {
		if s.Name == "run" {
			continue
		}
		if s.Parent.SpanID() != run.SpanContext().SpanID() {
			t.Errorf("%s is not a child of the run's span", s.Name)
		}
		w := want{name: s.Name}
		for _, kv := range s.Attributes {
			if kv.Key == telemetry.KeyErrorType {
				w.errorType = kv.Value.AsString()
			}
		}
		if (w.errorType != "") != (s.Status.Code == codes.Error) {
			t.Errorf("%s: error.type %q with status %v", s.Name, w.errorType, s.Status)
		}
		got = append(got, w)
	}
	wantSpans := []want{
		{"execute_tool Echo", ""},
		{"execute_tool Crash", telemetry.ToolFailed},
		{"execute_tool Missing", telemetry.ToolFailed},
		{"execute_tool Secret", telemetry.ToolDenied},
		{"chat claude-x", ""},
		{"chat claude-x", "_OTHER"},
	}
	cmpFn := func(a, b want) int { return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.errorType, b.errorType)) }
	slices.SortFunc(got, cmpFn)
	slices.SortFunc(wantSpans, cmpFn)
	if !slices.Equal(got, wantSpans) {
		t.Errorf("spans = %v\nwant %v", got, wantSpans)
	}
}
