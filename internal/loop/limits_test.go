package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

type countingPermit struct{ n atomic.Int32 }

func (p *countingPermit) PermitInput(_ context.Context, _ string, _ tool.Tool, _ tool.Env, in json.RawMessage) (json.RawMessage, error) {
	p.n.Add(1)
	return in, nil
}

// An oversized tool input never reaches the tool, the permission layer or
// the schema validator, and the model is told the size and the limit
// without getting its input back.
func TestToolInputCap(t *testing.T) {
	big := func(n int) string { return fmt.Sprintf(`{"text":%q}`, strings.Repeat("A", n)) }
	for _, tc := range []struct {
		name    string
		limit   int64
		input   string
		wantRun bool
		wantMsg []string
	}{
		{name: "3 MB under the default", input: big(3 << 20), wantMsg: []string{"3145739 bytes", "1048576 bytes", "limits.maxToolInputBytes"}},
		{name: "just over a set limit", limit: 100, input: big(100), wantMsg: []string{"111 bytes", "100 bytes"}},
		{name: "at a set limit", limit: 111, input: big(100), wantRun: true},
		{name: "small under the default", input: big(10), wantRun: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Int32
			tools := set(t, echo("echo", true, func(context.Context, echoIn) error { ran.Add(1); return nil }))
			perm := &countingPermit{}
			model := scripted(
				llm.Reply(use("t1", "echo", tc.input)),
				llm.Reply(llm.Text("done")),
			)
			out, err := Run(t.Context(), Config{Model: model, Tools: tools, Permit: perm, MaxToolInputBytes: tc.limit}, []llm.Message{llm.UserText("go")})
			if err != nil {
				t.Fatal(err)
			}
			res := out.Messages[2].Content[0]
			text := fmt.Sprint(res.Content)
			if tc.wantRun {
				if ran.Load() != 1 || res.IsError {
					t.Fatalf("an input within the limit did not run: %.200s", text)
				}
				return
			}
			if ran.Load() != 0 || perm.n.Load() != 0 {
				t.Errorf("the oversized call ran %d times and was put to the permission layer %d times, want 0 and 0", ran.Load(), perm.n.Load())
			}
			if !res.IsError {
				t.Errorf("result is not an error: %.200s", text)
			}
			if len(text) > 500 || strings.Contains(text, "AAAA") {
				t.Errorf("the result echoes the input (%d bytes): %.200s", len(text), text)
			}
			for _, w := range tc.wantMsg {
				if !strings.Contains(text, w) {
					t.Errorf("result %.200q does not say %q", text, w)
				}
			}
		})
	}
}
