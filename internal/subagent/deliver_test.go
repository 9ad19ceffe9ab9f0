package subagent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
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
			return resultText(mustInvokeTool(h.t, tools, "task_output", c, HarnessTaskOutputInput{TaskID: "task_" + lt.ID}))
		}},
		{"wait_async_results", func(h *harness, tools []tool.Tool, c Caller, lt *liveTask) string {
			return resultText(mustInvokeTool(h.t, tools, "wait_async_results", c, WaitAsyncResultsInput{TaskIDs: []string{"task_" + lt.ID}}))
		}},
		{"agent_send's wait", func(h *harness, _ []tool.Tool, c Caller, lt *liveTask) string {
			// The run ended between agent_send queueing its message and
			// beginning to wait: the wait finds it over, notified.
			hp := h.profile("harness")(h.svc).(interface {
				AwaitReply(context.Context, Caller, *Running, time.Duration) (string, bool)
			})
			r, ok := hp.AwaitReply(context.Background(), c, &Running{lt}, time.Second)
			if !ok {
				h.t.Fatal("agent_send's wait did not see the run's end")
			}
			return r
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

// TestHarnessResultReachesModelOnce (S-N1): a run's result reaches the
// model once however many harness tools watch it end. A run that ends in
// the foreground is answered by the agent_spawn call that waits for it;
// agent_send's wait and wait_async_results, watching the same run from a
// call of the same message, used to repeat its reply (they took a run
// without a task record for one nobody else would deliver).
func TestHarnessResultReachesModelOnce(t *testing.T) {
	readers := []struct {
		name string
		// read starts a call that watches the running agent id (labelled
		// "w").
		read func(tools []tool.Tool, c Caller, id string) <-chan tool.Result
	}{
		{"agent_send's wait", func(tools []tool.Tool, c Caller, _ string) <-chan tool.Result {
			wait := 30
			return invokeAsync(tools, "agent_send", c, AgentSendInput{Label: "w", Message: "ping", TimeoutSeconds: &wait})
		}},
		{"wait_async_results", func(tools []tool.Tool, c Caller, id string) <-chan tool.Result {
			return invokeAsync(tools, "wait_async_results", c, WaitAsyncResultsInput{TaskIDs: []string{"task_" + id}})
		}},
	}
	for _, rd := range readers {
		t.Run(rd.name, inBubble(func(t *testing.T) {
			gs := &holds{}
			h := newProfileHarness(t, setup{script: profileScript(gs)}, "harness")
			c := h.mainCaller()
			tools := h.profileTools(c, "harness")
			wait := 30
			spawned := invokeAsync(tools, "agent_spawn", c, AgentSpawnInput{AgentID: "general-purpose", Task: "block:g", Label: "w", TimeoutSeconds: &wait})
			gs.get("g").waitEntered(t)
			var id string
			for _, lt := range h.svc.treeRuns(c.RootSessionID) {
				id = lt.ID
			}
			read := rd.read(tools, c, id)
			eventually(t, rd.name+" watches the run", func() bool { return waitersOf(h.svc, h.svc.live(id)) == 1 })
			gs.get("g").open()
			texts := []string{resultText(recv(t, spawned, "agent_spawn")), resultText(recv(t, read, rd.name))}
			replies := 0
			for _, text := range texts {
				replies += strings.Count(text, "reply: echo:")
			}
			if replies != 1 {
				t.Errorf("the agent's reply reached the model %d times, want once:\nagent_spawn:\n%s\n%s:\n%s", replies, texts[0], rd.name, texts[1])
			}
			if !strings.Contains(texts[0], "status: ok\nreply: echo:") {
				t.Errorf("agent_spawn, which waited for the run in the foreground, does not give its reply:\n%s", texts[0])
			}
			if !strings.Contains(texts[1], "not repeated") {
				t.Errorf("%s does not say the reply was given elsewhere:\n%s", rd.name, texts[1])
			}
		}))
	}
}

// waitersOf counts the readers watching a run (0 for a run not in
// progress).
func waitersOf(s *Service, lt *liveTask) int {
	if lt == nil {
		return 0
	}
	return s.desk.Watchers(lt)
}

// Every TaskOutput reads through one sequence (reading): a blocking read
// of a run that ends in the foreground while it waits says the run ended
// and that its result is the reply of the call that started it. The claude
// profile's TaskOutput used to answer that with an error (the run left no
// record to read after the wait); the harness's task_output did not.
func TestTaskOutputOfAForegroundRunThatEnds(t *testing.T) {
	wait := 30
	readers := []struct {
		surface, spawn, tool string
		spawnInput           any
		input                func(id string) any
		want                 []string
	}{
		{"claude", "Agent", "TaskOutput", AgentInput{Description: "fg", Prompt: "work"},
			func(id string) any { return TaskOutputInput{TaskID: id} },
			[]string{"<status>completed</status>", "ran in the foreground"}},
		{"harness", "agent_spawn", "task_output", AgentSpawnInput{AgentID: "general-purpose", Task: "work", TimeoutSeconds: &wait},
			func(id string) any { return HarnessTaskOutputInput{TaskID: "task_" + id} },
			[]string{"status: completed", "ran in the foreground"}},
	}
	for _, rd := range readers {
		t.Run(rd.tool, inBubble(func(t *testing.T) {
			g := newGate()
			h := newProfileHarness(t, setup{script: func(ctx context.Context, _ string, req *llm.Request) (*llm.Response, error) {
				if err := g.wait(ctx, req); err != nil {
					return nil, err
				}
				return reply("the answer"), nil
			}}, rd.surface)
			c := h.mainCaller()
			tools := h.profileTools(c, rd.surface)
			spawned := invokeAsync(tools, rd.spawn, c, rd.spawnInput)
			recv(t, g.entered, "the child's model call")
			var id string
			for _, lt := range h.svc.treeRuns(c.RootSessionID) {
				id = lt.ID
			}
			read := invokeAsync(tools, rd.tool, c, rd.input(id))
			eventually(t, rd.tool+" watches the run", func() bool { return waitersOf(h.svc, h.svc.live(id)) == 1 })
			close(g.release)
			if res := recv(t, spawned, rd.spawn); !strings.Contains(resultText(res), "the answer") {
				t.Errorf("%s, which waited in the foreground, does not give the result:\n%s", rd.spawn, resultText(res))
			}
			res := recv(t, read, rd.tool)
			text := resultText(res)
			if res.IsError || strings.Contains(text, "the answer") {
				t.Errorf("%s of a run that ended in the foreground (error %v) shows the result or fails:\n%s", rd.tool, res.IsError, text)
			}
			for _, w := range rd.want {
				if !strings.Contains(text, w) {
					t.Errorf("%s = %s\nwant it to contain %q", rd.tool, text, w)
				}
			}
		}))
	}
}
