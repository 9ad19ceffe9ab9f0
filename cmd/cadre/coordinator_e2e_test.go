package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// TestCoordinatorMode is issue 26's coordinator acceptance (S-A7), for each
// way of turning it on: the main agent's request offers only the
// orchestration tools and the coordinator's prompt; its Agent call — with
// no run_in_background, a model of its own and no subagent_type, which
// would fork with the fork gate on — starts a general-purpose worker in
// the background on the worker's own model; the coordinator hears the
// notification and answers.
func TestCoordinatorMode(t *testing.T) {
	for _, how := range []struct {
		name     string
		args     []string
		env      string
		settings string
	}{
		{name: "flag", args: []string{"--coordinator"}, settings: `{"subagents": {"fork": true}}`},
		{name: "env", env: "CADRE_COORDINATOR_MODE=1", settings: `{"subagents": {"fork": true}}`},
		{name: "settings", settings: `{"subagents": {"fork": true, "coordinator": true}}`},
	} {
		t.Run(how.name, func(t *testing.T) {
			var (
				mu      sync.Mutex
				workers []testkit.Request
			)
			srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
				body := string(req.Body)
				if !strings.Contains(body, "coordinator mode") {
					mu.Lock()
					workers = append(workers, req)
					mu.Unlock()
					return testkit.Reply{Text: "WORKER-DONE: counted 3 files"}
				}
				switch {
				case strings.Contains(body, "WORKER-DONE"):
					return testkit.Reply{Text: "The worker counted 3 files."}
				case strings.Contains(body, "tool_result"):
					return testkit.Reply{Text: "Waiting for the worker."}
				}
				return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_worker", Name: "Agent", Input: map[string]any{
					"description": "count files", "prompt": "WORKER-TASK: count the files", "model": "opus",
				}}}}
			})
			e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
			if how.env != "" {
				e.set(how.env)
			}
			e.write(".cadre/settings.json", how.settings)
			p := ok(t, e.run("", append([]string{"-p", "count the files here", "--model", sonnet, "--output-format", "stream-json"}, how.args...)...))
			var mains []testkit.Request
			for _, r := range srv.Requests() {
				if strings.Contains(string(r.Body), "coordinator mode") {
					mains = append(mains, r)
				}
			}
			if len(mains) < 2 {
				t.Fatalf("%d coordinator requests; stdout:\n%s", len(mains), p.stdout)
			}
			if got, want := toolNames(mains[0]), []string{"Agent", "SendMessage", "TaskList", "TaskOutput", "TaskStop"}; !slices.Equal(got, want) {
				t.Errorf("the coordinator was offered %v, want only %v", got, want)
			}
			if !strings.Contains(fmt.Sprint(mains[0].JSON()["system"]), "You are cadre in coordinator mode") {
				t.Error("the coordinator's system prompt is not the coordinator prompt")
			}
			// The call's result: launched in the background.
			if !strings.Contains(string(mains[1].Body), "Async agent launched successfully") {
				t.Errorf("the Agent call did not launch in the background: %.600s", mains[1].Body)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(workers) != 1 {
				t.Fatalf("%d worker requests, want 1", len(workers))
			}
			w := workers[0]
			if isFork(w) {
				t.Error("the worker is a fork: forks are off in coordinator mode")
			}
			if m := w.JSON()["model"]; m == "claude-opus-5" || strings.Contains(fmt.Sprint(m), "opus") {
				t.Errorf("the worker ran on %v: a coordinator's model override must be ignored", m)
			}
			if !strings.Contains(string(w.Body), "WORKER-TASK") || slices.Contains(toolNames(w), "Agent") {
				t.Errorf("the worker is not a general-purpose leaf with the task: tools %v", toolNames(w))
			}
			ls := lines(t, p.stdout)
			if res := ls[len(ls)-1]; res["result"] != "The worker counted 3 files." {
				t.Errorf("final result %v", res["result"])
			}
		})
	}
}

// A coordinator needs the claude profile's names for its tools.
func TestCoordinatorModeNeedsClaudeSurface(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(testkit.Request) testkit.Reply { return testkit.Reply{Text: "ran anyway"} })
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".cadre/settings.json", `{"subagents": {"surface": "opencode", "coordinator": true}}`)
	p := e.run("", "-p", "hi", "--model", sonnet)
	if p.code == 0 || !strings.Contains(p.stderr, "coordinator mode needs the claude surface profile") {
		t.Errorf("exit %d, stderr %q", p.code, p.stderr)
	}
}
