//go:build unix

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fanOutChildren is how many Agent calls the main agent makes at once.
const fanOutChildren = 100

// fanOutScenario is a scripted model (internal/provider/script) whose main
// agent calls Agent fanOutChildren times in its first turn; every child
// ("*") answers at once, and the main agent's second turn quotes every
// result, so the output shows whether every child succeeded.
func fanOutScenario(n int) string {
	var b strings.Builder
	b.WriteString("model: bench-fan-out\nagents:\n  main:\n    - text: \"Splitting the job between agents.\"\n      tool_use:\n")
	for i := range n {
		fmt.Fprintf(&b, "        - name: Agent\n          input: {description: \"part %d\", prompt: \"Do part %d of the job and report back.\"}\n", i, i)
	}
	b.WriteString("      usage: {input_tokens: 1200, output_tokens: 40}\n")
	b.WriteString("    - text: \"{{range .ToolResults}}{{.}} {{end}}\"\n")
	b.WriteString("      usage: {input_tokens: 1200, output_tokens: 40}\n")
	b.WriteString("  \"*\":\n    - text: \"CHILD-OK\"\n      usage: {input_tokens: 1200, output_tokens: 40}\n")
	return b.String()
}

// BenchmarkFanOut100Binary is one `cadre -p` run whose main agent spawns
// 100 subagents in one message against the scripted (zero-latency) model:
// start-up, 100 child sessions created, run in parallel and recorded, the
// main agent's second turn with 100 results, and exit. It reports the
// wall time and the process's peak RSS.
func BenchmarkFanOut100Binary(b *testing.B) {
	p := newProject(b)
	scenario := filepath.Join(p.dir, "fan-out.yaml")
	if err := os.WriteFile(scenario, []byte(fanOutScenario(fanOutChildren)), 0o644); err != nil {
		b.Fatal(err)
	}
	// The answer quotes every child's result: one CHILD-OK per child
	// that succeeded.
	args := []string{"-p", "Split the job between agents.", "--output-format", "json", "--model", "script:" + scenario}
	loop(b, func() int64 {
		out, rss := p.exec(b, args...)
		if n := strings.Count(out, "CHILD-OK"); n != fanOutChildren {
			b.Fatalf("cadre %v: %d CHILD-OK in the answer, want %d:\n%s", args, n, fanOutChildren, out)
		}
		return rss
	})
}
