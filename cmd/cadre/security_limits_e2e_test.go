package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// A provider that falls silent mid-stream no longer hangs the run: the
// stalled attempt times out after limits.streamIdleSeconds, is retried,
// and the retry's answer is the result.
func TestStalledStreamIsRetried(t *testing.T) {
	e, srv := anthropicEnv(t, testkit.Queue(
		testkit.Reply{Text: "this answer never ends", Stall: testkit.StallMidStream, StallAfter: 4},
		testkit.Reply{Text: "The second attempt answered."},
	))
	e.write(".cadre/settings.json", `{"limits": {"streamIdleSeconds": 0.3}}`)
	start := time.Now()
	p := ok(t, e.run("", "-p", "hello", "--model", sonnet))
	if !strings.Contains(p.stdout, "The second attempt answered.") {
		t.Errorf("stdout %q, want the retried answer", p.stdout)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want the stalled one and its retry", n)
	}
	// Far below the 3-minute default: the setting was read.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the run took %v", d)
	}
}

// A tool input past limits.maxToolInputBytes is refused with its size and
// the limit: the tool does not run and the input is not sent back.
func TestOversizedToolInputIsRefused(t *testing.T) {
	content := strings.Repeat("A", 3<<20)
	e, srv := anthropicEnv(t, func(req testkit.Request) testkit.Reply {
		if !strings.Contains(string(req.Body), "tool_result") {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Write", Input: map[string]any{"file_path": "big.txt", "content": content}}}, DeltaSize: 64 << 10}
		}
		return testkit.Reply{Text: "I could not write it."}
	})
	p := ok(t, e.run("", "-p", "write a big file", "--model", sonnet, "--output-format", "stream-json", "--permission-mode", "acceptEdits"))
	rs := toolResults(t, p.stdout)
	if len(rs) != 1 {
		t.Fatalf("%d tool results, want 1", len(rs))
	}
	text := fmt.Sprint(rs[0]["content"])
	if rs[0]["is_error"] != true || len(text) > 1000 || !strings.Contains(text, "1048576 bytes") || !strings.Contains(text, "limits.maxToolInputBytes") {
		t.Errorf("tool result (%d bytes) = %.300s; want a short is_error naming the size and the limit", len(text), text)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "big.txt")); !os.IsNotExist(err) {
		t.Errorf("the oversized Write ran: %v", err)
	}
	// The second request carries the refusal, not the input a second time
	// inside the tool result.
	reqs := srv.Requests()
	if len(reqs) != 2 || strings.Count(string(reqs[1].Body), content) != 1 {
		t.Errorf("the follow-up request holds the input %d times, want once (the model's own call)", strings.Count(string(reqs[len(reqs)-1].Body), content))
	}
}

// A reply past limits.maxReplyBytes ends the run with one line naming the
// limit, and is not asked for again.
func TestOversizedReplyFails(t *testing.T) {
	e, srv := anthropicEnv(t, func(testkit.Request) testkit.Reply {
		return testkit.Reply{Text: strings.Repeat("x", 2<<20), DeltaSize: 4096}
	})
	e.write(".cadre/settings.json", `{"limits": {"maxReplyBytes": 200000}}`)
	p := e.run("", "-p", "say a lot", "--model", sonnet)
	failsWith(t, p, "limits.maxReplyBytes", "195.3 KiB")
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: an oversized reply is not retried", n)
	}
}

// Two processes resuming one session at once: exactly one runs, the other
// exits at once naming the session and the process that holds it, and the
// transcript holds one branch. A SIGKILLed holder frees the session.
func TestOneWriterPerSession(t *testing.T) {
	release := make(chan struct{})
	h, arrived := counting(func(n int, req testkit.Request) testkit.Reply {
		switch n {
		case 2: // the resume that won the session: held until the loser is seen
			return testkit.Reply{Text: "branch answer", Wait: release}
		case 3: // the resume that will be killed: held forever
			return testkit.Reply{Text: "never", Wait: make(chan struct{})}
		}
		return testkit.Reply{Text: "ok"}
	})
	e, srv := anthropicEnv(t, h)
	id := sessionID(t, ok(t, e.run("", "-p", "start", "--model", sonnet, "--output-format", "stream-json")))
	waitRequest(t, arrived, 1)

	a := e.start("-p", "branch A", "--model", sonnet, "--resume", id)
	b := e.start("-p", "branch B", "--model", sonnet, "--resume", id)
	var loser, winner *running
	select {
	case <-a.done:
		loser, winner = a, b
	case <-b.done:
		loser, winner = b, a
	case <-time.After(30 * time.Second):
		t.Fatal("neither resume ended: the second writer was not refused")
	}
	lp := loser.wait(t, time.Second)
	failsWith(t, lp, "session "+id+" is in use by ", "wait")
	// The holder records its pid just after it takes the lock; a loser that
	// comes in between can only say "another process".
	if holder := "in use by process " + fmt.Sprint(winner.cmd.Process.Pid) + " since"; !strings.Contains(lp.stderr, holder) &&
		!strings.Contains(lp.stderr, "in use by another process") {
		t.Errorf("stderr %q names neither the holder (%q) nor another process", lp.stderr, holder)
	}
	close(release)
	wp := ok(t, winner.wait(t, 30*time.Second))
	if !strings.Contains(wp.stdout, "branch answer") {
		t.Errorf("the winner's answer: %q", wp.stdout)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2: the refused resume must not reach the model", n)
	}
	s := showSession(t, e, id)
	var prompts []string
	for _, en := range s.Transcript {
		if en.Type == "user" && en.Message != nil {
			prompts = append(prompts, en.Message.Text())
		}
	}
	if len(prompts) != 2 || prompts[0] != "start" || (prompts[1] != "branch A" && prompts[1] != "branch B") {
		t.Errorf("transcript prompts %q, want the first run's and one branch's", prompts)
	}

	// A holder killed mid-run leaves the session resumable.
	k := e.start("-p", "killed", "--model", sonnet, "--resume", id)
	waitRequest(t, arrived, 3)
	if err := k.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	k.wait(t, 10*time.Second)
	p := ok(t, e.run("", "-p", "after the kill", "--model", sonnet, "--resume", id))
	if !strings.Contains(p.stdout, "ok") {
		t.Errorf("resume after SIGKILL answered %q", p.stdout)
	}
}

// --disallowedTools bash (wrong case) did nothing and said nothing. It now
// warns with the name it was meant to be and, being a deny rule, holds.
func TestMiscasedDenyRuleWarnsAndHolds(t *testing.T) {
	e, _ := anthropicEnv(t, func(req testkit.Request) testkit.Reply {
		if !strings.Contains(string(req.Body), "tool_result") {
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "touch pwned"}}}}
		}
		return testkit.Reply{Text: "Bash was refused."}
	})
	p := ok(t, e.run("", "-p", "run it", "--model", sonnet, "--output-format", "stream-json", "--disallowedTools", "bash", "--permission-mode", "bypassPermissions"))
	if !strings.Contains(p.stderr, `cadre: warning: flags: --disallowedTools: unknown tool "bash" (did you mean "Bash"?)`) {
		t.Errorf("stderr %q, want a warning suggesting Bash", p.stderr)
	}
	ls := lines(t, p.stdout)
	if tools := fmt.Sprint(ls[0]["tools"]); strings.Contains(tools, "Bash") {
		t.Errorf("Bash is still offered: %s", tools)
	}
	rs := toolResults(t, p.stdout)
	if len(rs) != 1 || rs[0]["is_error"] != true {
		t.Errorf("tool results %v, want the Bash call refused", rs)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "pwned")); !os.IsNotExist(err) {
		t.Errorf("the denied command ran: %v", err)
	}
}
