package main

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// A background subagent's notification reaches the main agent after its
// turn 2 in the recording; the replay delivers it at the same turn.
func TestReplayBackgroundSubagent(t *testing.T) {
	mainWaited := make(chan struct{})
	var once sync.Once
	handler := func(req testkit.Request) testkit.Reply {
		k := assistantTurns(req)
		body := string(req.Body)
		if strings.Contains(body, "REPLAY-REVIEWER") {
			switch k {
			case 0:
				return testkit.Reply{Text: "Reading.", ToolCalls: []testkit.ToolCall{{Name: "Read", Input: map[string]any{"file_path": "stock.go"}}}}
			}
			// The run ends only once the main agent has said it waits, so
			// the notification comes after its turn 2, every time.
			return testkit.Reply{Text: "REVIEW: stock.go:4 accepts a negative count.", Wait: mainWaited}
		}
		switch k {
		case 0:
			return testkit.Reply{Text: "Starting the reviewer.", ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{
				"description": "review stock.go", "subagent_type": "reviewer", "prompt": "Review stock.go for bugs.", "run_in_background": true}}}}
		case 1:
			defer once.Do(func() { close(mainWaited) })
			return testkit.Reply{Text: "Waiting for the reviewer."}
		}
		return testkit.Reply{Text: "Done: the reviewer found a bug."}
	}
	srv := testkit.NewAnthropic(t, handler)
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".claude/agents/reviewer.md", replayReviewerFile)
	e.write("stock.go", "package stock\n\n// TODO: reject negative counts.\nfunc Take(n int) int { return -n }\n")
	git(t, e.dir, "init", "--quiet")
	git(t, e.dir, "add", "--all")
	git(t, e.dir, "commit", "--quiet", "-m", "fixture")
	p := e.run("", "-p", "Review stock.go", "--output-format", "json", "--model", "claude-sonnet-5-5")
	var res struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
	}
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil || !strings.Contains(res.Result, "Done:") {
		t.Fatalf("recording: %v %s\n%s", err, p.stdout, p.stderr)
	}
	e.set("ANTHROPIC_BASE_URL=" + deadURL(t))
	for i := range 2 {
		j := decodeReplay(t, e.run("", "replay", "--json", res.SessionID))
		if j.Diverged || j.TurnsReplayed != 5 || !strings.Contains(j.Result, "Done:") {
			t.Fatalf("replay %d: %+v", i, j)
		}
	}
}
