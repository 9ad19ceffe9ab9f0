package loop

import (
	"context"
	"testing"

	"github.com/cadre-dev/cadre/llm"
)

// BenchmarkTurn measures the loop's own cost per model turn against a
// zero-latency model: building the request, running one concurrency-safe
// tool call with schema validation, and assembling the result message.
// Each op is a two-turn run (a tool call, then the answer).
func BenchmarkTurn(b *testing.B) {
	tools := set(b, echo("echo", true, nil))
	model := scripted(
		llm.Reply(llm.Text("looking"), use("t1", "echo", `{"text":"a"}`)),
		llm.Reply(llm.Text("done")),
	)
	cfg := Config{Model: model, Tools: tools, OnStep: func(context.Context, Step) error { return nil }}
	history := []llm.Message{llm.UserText("go")}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(ctx, cfg, history); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/turn")
}
