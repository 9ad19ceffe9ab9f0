//go:build unix

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// parallelChildren is how many Agent calls BenchmarkFanOut10Binary's main
// agent makes in one message.
const parallelChildren = 10

// The prompts tell the fake server who is asking: the main agent's first
// request carries mainPrompt, a child's carries its part's prompt.
const (
	mainPrompt  = "Split the job between agents."
	childPrompt = "Do part %d of the job and report back."
	childAnswer = "CHILD-OK"
)

// fanOutHandler is the fake Anthropic model of BenchmarkFanOut10Binary: the
// main agent calls Agent n times in its first turn, every child answers at
// once, and the main agent's second turn says how many of the results it
// got carry a child's answer, so that a run whose children failed cannot
// pass for a good one.
func fanOutHandler(n int) testkit.Handler {
	calls := make([]testkit.ToolCall, n)
	for i := range calls {
		calls[i] = testkit.ToolCall{Name: "Agent", Input: map[string]any{
			"description": fmt.Sprintf("part %d", i), "prompt": fmt.Sprintf(childPrompt, i),
		}}
	}
	return func(req testkit.Request) testkit.Reply {
		switch {
		case bytes.Contains(req.Body, []byte("tool_result")):
			return testkit.Reply{Text: fmt.Sprintf("%d agents answered", answered(req.Body)), Usage: usage()}
		case bytes.Contains(req.Body, []byte(mainPrompt)):
			return testkit.Reply{ToolCalls: calls, Usage: usage()}
		}
		return testkit.Reply{Text: childAnswer, Usage: usage()}
	}
}

// answered counts the tool results of a request's last message that carry
// a child's answer and are not errors.
func answered(body []byte) int {
	var req struct {
		Messages []struct {
			Content []struct {
				Type    string          `json:"type"`
				IsError bool            `json:"is_error"`
				Content json.RawMessage `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.Messages) == 0 {
		return 0
	}
	n := 0
	for _, b := range req.Messages[len(req.Messages)-1].Content {
		if b.Type == "tool_result" && !b.IsError && bytes.Contains(b.Content, []byte(childAnswer)) {
			n++
		}
	}
	return n
}

// BenchmarkFanOut10Binary is one `cadre -p` run against the fake Anthropic
// server whose main agent calls Agent ten times in one message: start-up,
// ten child sessions created and run in parallel, each answering at once,
// the main agent's second turn with the ten results, and exit. It reports
// the wall time and the process's peak RSS; what ten children add is this
// run's time minus BenchmarkOneTurnRun's (which differs from it by the
// children and the main agent's second turn).
func BenchmarkFanOut10Binary(b *testing.B) {
	srv := testkit.NewAnthropic(b, fanOutHandler(parallelChildren))
	p := newProject(b, "ANTHROPIC_BASE_URL="+srv.URL)
	want := fmt.Sprintf(`"result":"%d agents answered"`, parallelChildren)
	args := []string{"-p", mainPrompt, "--output-format", "json", "--model", "claude-sonnet-5-5"}
	loop(b, func() int64 {
		out, rss := p.exec(b, args...)
		if !strings.Contains(out, want) {
			b.Fatalf("cadre %v: the answer lacks %s:\n%s", args, want, out)
		}
		return rss
	})
}
