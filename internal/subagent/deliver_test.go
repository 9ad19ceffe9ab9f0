package subagent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/tool"
)

// TestHarnessDeliversOnce (S-N1): the harness tools that read a background
// run's end — task_output, wait_async_results and agent_send's wait —
// deliver its result exactly once with the notification, as TaskOutput
// does: a notification still queued is withdrawn and the tool shows the
// result; one the agent has already read is not repeated by the tool.
func TestHarnessDeliversOnce(t *testing.T) {
	readers := []struct {
		name string
		read func(h *harness, tools []tool.Tool, c Caller, lt *liveTask) string
	}{
		{"task_output", func(h *harness, tools []tool.Tool, c Caller, lt *liveTask) string {
			return resultText(mustInvokeTool(h.t, tools, "task_output", c, HarnessTaskOutputInput{TaskID: "task_" + lt.id}))
		}},
		{"wait_async_results", func(h *harness, tools []tool.Tool, c Caller, lt *liveTask) string {
			return resultText(mustInvokeTool(h.t, tools, "wait_async_results", c, WaitAsyncResultsInput{TaskIDs: []string{"task_" + lt.id}}))
		}},
		{"agent_send's wait", func(h *harness, _ []tool.Tool, c Caller, lt *liveTask) string {
			// The run ended between agent_send queueing its message and
			// beginning to wait: the wait finds it over, notified.
			hp := &harnessProfile{s: h.svc, c: c, labels: map[string]labelled{}}
			r, ok := hp.awaitLive(context.Background(), lt, time.Second)
			if !ok {
				h.t.Fatal("agent_send's wait did not see the run's end")
			}
			return r.String()
		}},
	}
	for _, rd := range readers {
		for _, read := range []bool{false, true} {
			name := rd.name + "/notification queued"
			if read {
				name = rd.name + "/notification already read"
			}
			t.Run(name, func(t *testing.T) {
				gs := &holds{}
				h := newProfileHarness(t, setup{script: profileScript(gs)}, "harness")
				c := h.mainCaller()
				runs := h.ownGroup(&c)
				tools := h.profileTools(c, "harness")
				zero := 0
				id := agentIDOf(t, mustInvokeTool(t, tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "block:g", TimeoutSeconds: &zero}))
				gs.get("g").waitEntered(t)
				lt := h.running(id)
				gs.get("g").open()
				runs.Wait() // ended and notified: the notification waits in the queue
				if read {
					h.notification(id)
				}
				text := rd.read(h, tools, c, lt)
				left := forTask(h.svc.cfg.Queue.Take(""), id)
				shown := strings.Contains(text, "echo: block:g")
				switch {
				case !read && len(left) != 0:
					t.Errorf("%s showed the result, and its notification is still queued: the model gets it twice\n%s", rd.name, text)
				case !read && !shown:
					t.Errorf("%s withdrew nothing and did not show the result:\n%s", rd.name, text)
				case read && shown:
					t.Errorf("%s repeated a result the notification already delivered:\n%s", rd.name, text)
				case read && !strings.Contains(text, "already delivered"):
					t.Errorf("%s does not say the result was already delivered:\n%s", rd.name, text)
				case read && !strings.Contains(text, "status: completed") && !strings.Contains(text, "status: ok"):
					t.Errorf("%s does not give the status:\n%s", rd.name, text)
				}
			})
		}
	}
}
