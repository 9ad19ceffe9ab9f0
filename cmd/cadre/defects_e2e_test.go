package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/testkit"
)

// Correctness defects of issue 8, through the real binary.

// A foreground child moved to the background by its timeout_seconds is a
// background run like any other: `cadre tasks stop` from another process
// stops it, and the main agent is told it was stopped.
func TestMovedRunStoppedFromAnotherProcess(t *testing.T) {
	const useID = "toolu_moved"
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "never sent", Wait: heldForever()}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "MAIN-ANSWER: it was stopped."}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: useID, Name: "Agent", Input: map[string]any{
				"description": "slow job", "prompt": "MOVED-MARKER: take forever", "subagent_type": "general-purpose", "timeout_seconds": 1,
			}}}}
		}
		return testkit.Reply{Text: "It went on in the background; waiting."}
	}))
	r := e.start("-p", "start a slow job", "--model", sonnet, "--output-format", "stream-json")
	var id string
	bgEventually(t, "the main agent's request after the move", func() bool {
		mains, _ := bgCalls(srv)
		if len(mains) < 2 {
			return false
		}
		id = mains[1].launchedID()
		return id != ""
	})
	if rec := cliTask(t, e, id); rec.Status != task.StatusRunning || rec.Heartbeat.IsZero() {
		t.Errorf("the moved run's record: status %s, heartbeat %v; want running with a heartbeat", rec.Status, rec.Heartbeat)
	}
	ok(t, e.run("", "tasks", "stop", id))
	p := r.wait(t, 30*time.Second)
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s", p.code, p.stderr)
	}
	mains, _ := bgCalls(srv)
	last := mains[len(mains)-1]
	ns := last.notifications()
	if len(ns) != 1 {
		t.Fatalf("%d notifications, want 1:\n%s", len(ns), last.dump())
	}
	checkBGNotification(t, ns[0], id, useID, "killed", "was stopped")
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: it was stopped." {
		t.Errorf("final result %v", res)
	}
	if rec := cliTask(t, e, id); rec.Status != task.StatusKilled || !strings.Contains(rec.Error, "stopped") {
		t.Errorf("task after the stop: status %s, error %q; want killed, saying it was stopped", rec.Status, rec.Error)
	}
}

// cacheSegments are an Anthropic request's parts in the order the prompt
// cache reads them — tools, system blocks, then every message's blocks —
// each as JSON without its cache_control, and the index of the last part
// that carried one (the request's last breakpoint; -1 without any).
func cacheSegments(t *testing.T, req testkit.Request) (segs []string, last int) {
	t.Helper()
	var body struct {
		Tools    []map[string]any `json:"tools"`
		System   []map[string]any `json:"system"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatalf("request body: %v", err)
	}
	last = -1
	add := func(prefix string, part map[string]any) {
		if _, ok := part["cache_control"]; ok {
			last = len(segs)
			delete(part, "cache_control")
		}
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // "<" stays readable in failure messages
		if err := enc.Encode(part); err != nil {
			t.Fatal(err)
		}
		segs = append(segs, prefix+strings.TrimSpace(b.String()))
	}
	for _, tl := range body.Tools {
		add("tool ", tl)
	}
	for _, s := range body.System {
		add("system ", s)
	}
	for i, m := range body.Messages {
		for _, b := range m.Content {
			add(fmt.Sprintf("message %d %s ", i, m.Role), b)
		}
	}
	return segs, last
}

// The per-turn <subagents> context (S-A5) changes as background tasks come
// and go. It must not sit before a cache breakpoint, or no two requests of
// the main agent share a cached prefix: each request of the main agent
// repeats, byte for byte, everything up to the previous request's last
// breakpoint, and the context still reaches the model, after it.
func TestMainRequestsKeepTheirCachedPrefix(t *testing.T) {
	mainTurns := newBGFlag()
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			// Held while the main agent takes two more turns, so the task
			// is listed (running) in their context.
			if !mainTurns.wait() {
				return testkit.Reply{Text: "TEST-HARNESS-ERROR: the main agent's turns never came"}
			}
			return testkit.Reply{Text: "CACHE-CHILD-DONE"}
		case len(c.notifications()) > 0:
			return testkit.Reply{Text: "MAIN-ANSWER: done."}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall("toolu_cache", "cached job", "CACHE-MARKER: work")}}
		case len(c.uses("Glob")) == 0:
			return testkit.Reply{Text: "Looking meanwhile.", ToolCalls: globCall()}
		}
		mainTurns.set()
		return testkit.Reply{Text: "Waiting for the job."}
	}))
	p := ok(t, e.run("", "-p", "work while it runs", "--model", sonnet, "--output-format", "stream-json"))
	if res := finalResult(t, p.stdout); res["result"] != "MAIN-ANSWER: done." {
		t.Fatalf("final result %v", res)
	}
	var mains []testkit.Request
	for _, r := range srv.Requests() {
		if !bgDecode(r).child() {
			mains = append(mains, r)
		}
	}
	if len(mains) != 4 {
		t.Fatalf("%d main requests, want 4", len(mains))
	}
	for i := 1; i < len(mains); i++ {
		prev, last := cacheSegments(t, mains[i-1])
		cur, _ := cacheSegments(t, mains[i])
		if last < 0 {
			t.Fatalf("main request %d has no cache breakpoint", i-1)
		}
		for j := 0; j <= last; j++ {
			if j >= len(cur) || cur[j] != prev[j] {
				got := "(nothing)"
				if j < len(cur) {
					got = cur[j]
				}
				t.Fatalf("main request %d differs from request %d before its last cache breakpoint, at part %d:\n  was: %.300s\n  now: %.300s", i, i-1, j, prev[j], got)
			}
		}
	}
	// The context reaches the model, last, listing the running task.
	for i, r := range mains {
		c := bgDecode(r)
		if strings.Contains(c.system, "<subagents>") {
			t.Errorf("main request %d carries the per-turn context in its system prompt", i)
		}
		segs, _ := cacheSegments(t, r)
		if tail := segs[len(segs)-1]; !strings.HasPrefix(tail, fmt.Sprintf("message %d user ", len(c.msgs)-1)) || !strings.Contains(tail, "<subagents>") {
			t.Errorf("main request %d does not end with the per-turn context: %.300s", i, tail)
		}
		if len(c.reminders) != 1 {
			t.Errorf("main request %d holds %d per-turn reminders, want 1 (none kept from earlier turns)", i, len(c.reminders))
		} else if i == 2 && !strings.Contains(c.reminders[0], `"cached job", running`) {
			t.Errorf("main request %d's context does not list the running task:\n%s", i, c.reminders[0])
		}
	}
}

// An OpenAI-compatible server has no cache breakpoints but caches prefixes
// by itself: the per-turn context still reaches it, as the last message,
// and every request repeats the previous one's messages, the context
// aside, byte for byte.
func TestOpenAIRequestsKeepTheirPrefix(t *testing.T) {
	srv := testkit.NewOpenAI(t, readThenAnswer)
	e := newEnv(t).set("OPENAI_BASE_URL=" + srv.URL)
	checkToolLoop(t, e.run("", "-p", secretAsk, "--output-format", "stream-json", "--verbose", "--model", "openai:gpt-6-luna"))
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var msgs [2][]json.RawMessage
	for i, r := range reqs {
		var body struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		msgs[i] = body.Messages
		if strings.Contains(string(body.Messages[0]), "subagents") {
			t.Errorf("request %d carries the per-turn context in its system message", i)
		}
		var last struct{ Role, Content string }
		json.Unmarshal(body.Messages[len(body.Messages)-1], &last)
		if last.Role != "user" || !strings.HasPrefix(last.Content, "<system-reminder>") || !strings.Contains(last.Content, "<subagents>") {
			t.Errorf("request %d does not end with the per-turn context: %s", i, body.Messages[len(body.Messages)-1])
		}
	}
	shared := msgs[0][:len(msgs[0])-1]
	if len(msgs[1]) < len(shared) {
		t.Fatalf("the second request is shorter than the first")
	}
	for j, m := range shared {
		if string(msgs[1][j]) != string(m) {
			t.Errorf("message %d differs between the two requests:\n  was: %s\n  now: %s", j, m, msgs[1][j])
		}
	}
}

// liveRun is a cadre process whose stream-json lines the test reads as they
// are written.
type liveRun struct {
	cmd   *exec.Cmd
	lines chan map[string]any // closed at the end of stdout
	all   []string            // every line, once lines is closed
	errb  bytes.Buffer
	done  chan struct{}
}

func (e *env) startLive(args ...string) *liveRun {
	e.t.Helper()
	r := &liveRun{cmd: exec.Command(bin, args...), lines: make(chan map[string]any, 1024), done: make(chan struct{})}
	r.cmd.Dir, r.cmd.Env, r.cmd.Stderr = e.dir, e.vars, &r.errb
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			r.all = append(r.all, sc.Text())
			var m map[string]any
			json.Unmarshal(sc.Bytes(), &m)
			r.lines <- m
		}
		close(r.lines)
		r.cmd.Wait()
	}()
	e.t.Cleanup(func() {
		r.cmd.Process.Kill()
		<-r.done
	})
	return r
}

// await reads lines until one satisfies cond.
func (r *liveRun) await(t *testing.T, what string, cond func(map[string]any) bool) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-r.lines:
			if !ok {
				t.Fatalf("cadre ended before %s; stderr:\n%s", what, r.errb.String())
			}
			if cond(l) {
				return
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// finish waits for the process to exit and returns what it printed.
func (r *liveRun) finish(t *testing.T) proc {
	t.Helper()
	go func() {
		for range r.lines {
		}
	}()
	select {
	case <-r.done:
	case <-time.After(30 * time.Second):
		r.cmd.Process.Kill()
		<-r.done
		t.Fatalf("cadre did not exit within 30s of SIGINT; stderr:\n%s", r.errb.String())
	}
	return proc{stdout: strings.Join(r.all, "\n") + "\n", stderr: r.errb.String(), code: r.cmd.ProcessState.ExitCode()}
}

// After SIGINT the last stream-json line is a result saying the run was
// interrupted — whatever was going on: the main agent's stream stalled, a
// foreground child's stream stalled, or the main agent had answered and was
// waiting for a background child whose stream stalled.
func TestSIGINTEndsWithAnInterruptedResult(t *testing.T) {
	stall := testkit.Reply{Stall: testkit.StallMidStream, StallAfter: 2}
	for _, tc := range []struct {
		name    string
		handler func(c *bgCall) testkit.Reply
		// ready is the moment to interrupt: a line cadre has printed.
		ready func(l map[string]any) bool
	}{
		{"main stream stalls", func(c *bgCall) testkit.Reply { return stall },
			func(l map[string]any) bool { return l["type"] == "system" && l["subtype"] == "init" }},
		{"foreground child stalls", func(c *bgCall) testkit.Reply {
			if c.child() {
				return stall
			}
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_fg", Name: "Agent", Input: map[string]any{
				"description": "stalling job", "prompt": "FG-MARKER: work", "subagent_type": "general-purpose",
			}}}}
		}, func(l map[string]any) bool { return l["type"] == "assistant" }},
		{"waiting for a background child", func(c *bgCall) testkit.Reply {
			switch {
			case c.child():
				return stall
			case len(c.uses("Agent")) == 0:
				return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall("toolu_bg", "stalling job", "BG-MARKER: work")}}
			}
			return testkit.Reply{Text: "Launched; waiting."}
		}, func(l map[string]any) bool { return l["type"] == "result" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := anthropicEnv(t, bgHandle(tc.handler))
			r := e.startLive("-p", "work", "--model", sonnet, "--output-format", "stream-json", "--verbose")
			r.await(t, "the moment to interrupt", tc.ready)
			if err := r.cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			p := r.finish(t)
			if p.code == 0 || p.code == -1 {
				t.Errorf("exit %d, want a non-zero exit of cadre's own", p.code)
			}
			res := finalResult(t, p.stdout)
			errs, _ := res["errors"].([]any)
			if res["subtype"] != "error_during_execution" || res["is_error"] != true || len(errs) == 0 || !strings.Contains(fmt.Sprint(errs[0]), "interrupt") {
				t.Errorf("last line %v, want an error_during_execution result saying the run was interrupted", res)
			}
			if n := strings.Count(strings.TrimSpace(p.stderr), "\n"); n != 0 || !strings.Contains(p.stderr, "interrupt") {
				t.Errorf("stderr %q, want one line saying the run was interrupted", p.stderr)
			}
		})
	}
}
