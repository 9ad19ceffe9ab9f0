//go:build unix

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// A fork's directive in a request body. The bodies are Go JSON, which
// escapes < and >.
const (
	forkDirectiveStart = `\u003cfork-boilerplate\u003e`
	forkDirectiveEnd   = `\u003c/fork-boilerplate\u003e`
)

// forkTask finds the task marker a fork was given, inside its directive
// (every fork's history holds all of its siblings' prompts too, in the
// parent's tool_use blocks, so the marker is looked for in the directive
// alone).
var forkTask = regexp.MustCompile(`FORK-TASK-\d+`)

// forkScenario is a main agent that forks n times in its first turn (Agent
// calls without subagent_type, with the fork gate on); every fork answers
// at once, and the main agent answers its launch results and each batch of
// notifications with a short text, so the run ends once the last fork has
// reported.
func forkScenario(n int) testkit.Handler {
	return func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		switch {
		case strings.Contains(body, "fork-boilerplate"):
			return testkit.Reply{Text: "FORK-DONE", Usage: usage()}
		case strings.Contains(body, "tool_result"):
			return testkit.Reply{Text: "Noted.", Usage: usage()}
		}
		calls := make([]testkit.ToolCall, n)
		for i := range calls {
			calls[i] = testkit.ToolCall{Name: "Agent", Input: map[string]any{
				"description": fmt.Sprintf("fork %d", i), "prompt": fmt.Sprintf("FORK-TASK-%d: look into part %d of the job", i, i),
			}}
		}
		return testkit.Reply{Text: "Splitting the work between forks.", ToolCalls: calls, Usage: usage()}
	}
}

// forkRequest is one fork's first request body, split at its directive.
type forkRequest struct {
	body      string
	remainder string // the body without the directive
	at        int    // where the directive starts
}

// forkFirstRequests picks each fork's first request out of one run's
// requests, keyed by the task marker in its directive.
func forkFirstRequests(b *testing.B, reqs []testkit.Request) map[string]forkRequest {
	b.Helper()
	first := map[string]forkRequest{}
	for _, r := range reqs {
		body := string(r.Body)
		i := strings.Index(body, forkDirectiveStart)
		if i < 0 {
			continue
		}
		j := strings.Index(body[i:], forkDirectiveEnd)
		if j < 0 {
			b.Fatalf("a fork request opens its directive but does not close it: …%.300s", body[i:])
		}
		j += i + len(forkDirectiveEnd)
		task := forkTask.FindString(body[i:j])
		if task == "" {
			b.Fatalf("a fork's directive names no FORK-TASK: %s", body[i:j])
		}
		if _, ok := first[task]; !ok {
			first[task] = forkRequest{body: body, remainder: body[:i] + body[j:], at: i}
		}
	}
	return first
}

// BenchmarkForkPrefix is one `cadre -p` run against the fake Anthropic
// server whose main agent forks 3 and 8 times in one message (the fork
// gate on in the project's settings). Each run checks that the forks'
// first request bodies are byte-identical outside their directives — the
// prefix a provider's prompt cache serves to every fork after the first —
// and reports per fork request: shared-prefix-% (the body without the
// directive over the whole body: providers cache tools, then system, then
// messages, so all of it but the directive is shared), directive-bytes,
// request-bytes, and cache-breakpoints (cache_control markers in the body).
// ns/op is the wall time of the whole run, exit included.
func BenchmarkForkPrefix(b *testing.B) {
	for _, n := range []int{3, 8} {
		b.Run(fmt.Sprintf("forks=%d", n), func(b *testing.B) {
			srv := testkit.NewAnthropic(b, forkScenario(n))
			p := newProject(b, "ANTHROPIC_BASE_URL="+srv.URL)
			if err := os.MkdirAll(filepath.Join(p.dir, ".cadre"), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p.dir, ".cadre", "settings.json"), []byte(`{"subagents": {"fork": true}}`), 0o644); err != nil {
				b.Fatal(err)
			}
			var requests, bodyBytes, directiveBytes, breakpoints, shared float64
			loop(b, func() int64 {
				seen := len(srv.Requests())
				rss := p.run(b, `"is_error":false`, "-p", "Study the code, split between forks.", "--output-format", "json", "--model", "claude-sonnet-5-5")
				forks := forkFirstRequests(b, srv.Requests()[seen:])
				if len(forks) != n {
					b.Fatalf("%d forks made requests, want %d", len(forks), n)
				}
				var base *forkRequest
				var baseTask string
				for task, f := range forks {
					if base == nil {
						base, baseTask = &f, task
					} else if f.remainder != base.remainder || f.at != base.at {
						k := 0
						for k < len(f.remainder) && k < len(base.remainder) && f.remainder[k] == base.remainder[k] {
							k++
						}
						b.Fatalf("the first requests of %s and %s differ outside the directive, at byte %d: …%.80s… vs …%.80s…",
							baseTask, task, k, base.remainder[max(0, k-20):], f.remainder[max(0, k-20):])
					}
					requests++
					bodyBytes += float64(len(f.body))
					directiveBytes += float64(len(f.body) - len(f.remainder))
					breakpoints += float64(strings.Count(f.body, `"cache_control":`))
					shared += float64(len(f.remainder)) / float64(len(f.body))
				}
				return rss
			})
			b.ReportMetric(100*shared/requests, "shared-prefix-%")
			b.ReportMetric(directiveBytes/requests, "directive-bytes")
			b.ReportMetric(bodyBytes/requests, "request-bytes")
			b.ReportMetric(breakpoints/requests, "cache-breakpoints")
		})
	}
}
