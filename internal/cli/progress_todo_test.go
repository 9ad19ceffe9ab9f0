package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

func TestProgressShowsTodosPerAgent(t *testing.T) {
	var buf bytes.Buffer
	c := &clock{t: t0}
	p := newProgress(&buf, false, c.now)
	todos := []cadre.Todo{
		{Content: "Read the code", Status: "completed", ActiveForm: "Reading the code"},
		{Content: "Write tests", Status: "in_progress", ActiveForm: "Writing tests"},
		{Content: "Run tests", Status: "pending", ActiveForm: "Running tests"},
	}
	main := tagged(mainAgent, 1, cadre.EventUser, llm.ToolResult("toolu_T1", "ok", false))
	main.Todos = todos
	p.Event(main)
	p.Event(tagged(reviewer, 2, cadre.EventAssistant, llm.Text("looking")))
	child := tagged(reviewer, 3, cadre.EventUser, llm.ToolResult("toolu_T2", "ok", false))
	child.Todos = todos[:1]
	p.Event(child)
	want := []string{
		"[main] todos 1/3: ✓ Read the code; ▸ Writing tests; ○ Run tests",
		"[reviewer] started: review the diff",
		"[reviewer] todos 1/1: ✓ Read the code",
	}
	if got := strings.Split(strings.TrimSpace(buf.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("progress:\n%s\nwant:\n%s", buf.String(), strings.Join(want, "\n"))
	}
}

func TestProgressColorsAnAgentOnATerminal(t *testing.T) {
	for _, tty := range []bool{true, false} {
		var buf bytes.Buffer
		c := &clock{t: t0}
		p := newProgress(&buf, tty, c.now)
		p.cols = func() int { return 100 }
		e := tagged(reviewer, 1, cadre.EventAssistant, llm.Text("looking"))
		e.AgentColor = "cyan"
		p.Event(e)
		colored := strings.Contains(buf.String(), "\x1b[36mreviewer\x1b[0m")
		if colored != tty {
			t.Errorf("tty %v: colored %v in %q", tty, colored, buf.String())
		}
	}
}
