package main

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// cadre replay (docs/replay.md): a run with a subagent is recorded against
// the fake Anthropic server, and replayed with the provider gone.

const replayReviewerFile = `---
name: reviewer
description: Reviews Go code for bugs.
tools: Read, Grep, Bash
model: inherit
---
REPLAY-REVIEWER: you review code and report findings with file:line.
`

// assistantTurns counts the assistant messages of an Anthropic request:
// the turn being asked for, from 0.
func assistantTurns(req testkit.Request) int {
	n := 0
	msgs, _ := req.JSON()["messages"].([]any)
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok && mm["role"] == "assistant" {
			n++
		}
	}
	return n
}

// recordedRun is the run being recorded: the main agent starts the
// reviewer and runs a command at once; the reviewer reads and greps, then
// counts lines with Bash, then answers.
func recordedRun(req testkit.Request) testkit.Reply {
	k := assistantTurns(req)
	if strings.Contains(string(req.Body), "REPLAY-REVIEWER") {
		switch k {
		case 0:
			return testkit.Reply{Text: "Reading the code.", ToolCalls: []testkit.ToolCall{
				{Name: "Read", Input: map[string]any{"file_path": "stock.go"}},
				{Name: "Grep", Input: map[string]any{"pattern": "TODO", "output_mode": "content"}},
			}}
		case 1:
			return testkit.Reply{Text: "Counting.", ToolCalls: []testkit.ToolCall{{Name: "Bash", Input: map[string]any{"command": "wc -l < stock.go"}}}}
		}
		return testkit.Reply{Text: "REVIEW: stock.go:4 accepts a negative count."}
	}
	if k == 0 {
		return testkit.Reply{Text: "Starting the reviewer.", ToolCalls: []testkit.ToolCall{
			{Name: "Agent", Input: map[string]any{"description": "review stock.go", "subagent_type": "reviewer", "prompt": "Review stock.go for bugs."}},
			{Name: "Bash", Input: map[string]any{"command": "cat notes.txt"}},
		}}
	}
	return testkit.Reply{Text: "Done: the reviewer found a bug in stock.go."}
}

// replayFixture records the run in a git repository and returns the env,
// the main session's id and the reviewer's.
func replayFixture(t *testing.T) (e *env, sessionID, childID string, srv *testkit.AnthropicServer) {
	t.Helper()
	srv = testkit.NewAnthropic(t, recordedRun)
	e = newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write(".claude/agents/reviewer.md", replayReviewerFile)
	e.write("stock.go", "package stock\n\n// TODO: reject negative counts.\nfunc Take(n int) int { return -n }\n")
	git(t, e.dir, "init", "--quiet")
	git(t, e.dir, "add", "--all")
	git(t, e.dir, "commit", "--quiet", "-m", "fixture")
	p := e.run("", "-p", "Review stock.go", "--output-format", "json", "--model", "claude-sonnet-5-5", "--allowedTools", "Bash")
	if p.code != 0 {
		t.Fatalf("recording run: exit %d\n%s\n%s", p.code, p.stderr, p.stdout)
	}
	var res struct {
		SessionID string `json:"session_id"`
		Result    string `json:"result"`
	}
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil || !strings.Contains(res.Result, "Done:") {
		t.Fatalf("recording run result %q (%v)", p.stdout, err)
	}
	ls := e.run("", "sessions", "--json", "--all")
	var sessions []struct {
		ID, Agent string
		ParentID  string `json:"parent_id"`
	}
	if err := json.Unmarshal([]byte(ls.stdout), &sessions); err != nil {
		t.Fatalf("sessions --json: %v\n%s", err, ls.stdout)
	}
	for _, s := range sessions {
		if s.ParentID == res.SessionID && s.Agent == "reviewer" {
			childID = s.ID
		}
	}
	if childID == "" {
		t.Fatalf("no reviewer session under %s: %s", res.SessionID, ls.stdout)
	}
	// Every tool the scenario names ran and succeeded, so the replay has
	// something real to compare.
	show := e.run("", "sessions", "show", childID)
	for _, want := range []string{"TODO: reject negative counts", "4"} {
		if !strings.Contains(show.stdout, want) {
			t.Fatalf("the reviewer's transcript lacks %q:\n%s", want, show.stdout)
		}
	}
	return e, res.SessionID, childID, srv
}

// deadURL is a base URL where nothing listens: the provider is gone.
func deadURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

type replayJSON struct {
	AgentType     string `json:"agent_type"`
	TurnsReplayed int    `json:"turns_replayed"`
	TurnsLive     int    `json:"turns_live"`
	Diverged      bool   `json:"diverged"`
	Stopped       bool   `json:"stopped"`
	Divergences   []struct {
		Kind, Agent, Tool, Detail, Diff string
		AgentID                         string `json:"agent_id"`
		Turn                            int
		ToolUseID                       string `json:"tool_use_id"`
	} `json:"divergences"`
	FilesChanged []string `json:"files_changed"`
	Result       string   `json:"result"`
}

func decodeReplay(t *testing.T, p proc) replayJSON {
	t.Helper()
	var r replayJSON
	if err := json.Unmarshal([]byte(p.stdout), &r); err != nil {
		t.Fatalf("replay --json: %v\nstdout: %s\nstderr: %s", err, p.stdout, p.stderr)
	}
	return r
}

func TestReplayCheck(t *testing.T) {
	e, sid, childID, srv := replayFixture(t)
	// The recording's provider is gone: a replay needs no model.
	recorded := len(srv.Requests())
	srv.Close()
	e.set("ANTHROPIC_BASE_URL=" + srv.URL)

	ok := e.run("", "replay", "--check", sid)
	if ok.code != 0 || !strings.Contains(ok.stdout, "no divergence") {
		t.Fatalf("faithful replay: exit %d\nstdout: %s\nstderr: %s", ok.code, ok.stdout, ok.stderr)
	}
	if !strings.Contains(ok.stdout, "5 from the recording, 0 live") {
		t.Errorf("want the 2 main and 3 reviewer turns fed from the recording:\n%s", ok.stdout)
	}
	if n := len(srv.Requests()); n != recorded {
		t.Errorf("the replay reached the provider: %d requests, %d recorded", n, recorded)
	}
	// The scratch worktree is gone, and the workspace untouched.
	if out := git(t, e.dir, "worktree", "list"); strings.Count(out, "\n") > 1 {
		t.Errorf("a worktree was left: %s", out)
	}
	if out := git(t, e.dir, "status", "--porcelain"); strings.TrimSpace(out) != "" {
		t.Errorf("the replay changed the workspace: %s", out)
	}

	// A file a tool reads changes (uncommitted): the replay sees it, and
	// names the first divergence: the reviewer's Read at its turn 1.
	e.write("stock.go", "package stock\n\n// TODO: reject negative counts.\nfunc Take(n int) int { return n }\n")
	bad := e.run("", "replay", "--check", sid)
	if bad.code != 3 {
		t.Fatalf("diverged replay: exit %d, want 3\nstdout: %s\nstderr: %s", bad.code, bad.stdout, bad.stderr)
	}
	for _, want := range []string{"diverged (stopped there) at tool_result: agent reviewer (" + childID + "), turn 1, tool Read (call ", "-     4\tfunc Take(n int) int { return -n }", "+     4\tfunc Take(n int) int { return n }"} {
		if !strings.Contains(bad.stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, bad.stdout)
		}
	}
	j := decodeReplay(t, e.run("", "replay", "--json", sid))
	if !j.Diverged || !j.Stopped || len(j.Divergences) != 1 {
		t.Fatalf("json report: %+v", j)
	}
	d := j.Divergences[0]
	if d.Kind != "tool_result" || d.Agent != "reviewer" || d.AgentID != childID || d.Turn != 1 || d.Tool != "Read" || !strings.HasPrefix(d.ToolUseID, "toolu_") {
		t.Errorf("first divergence %+v, want the reviewer's Read at turn 1", d)
	}
	if n := len(srv.Requests()); n != recorded {
		t.Errorf("the replay reached the provider: %d requests, %d recorded", n, recorded)
	}
}

func TestReplayReadOnlyTools(t *testing.T) {
	e, sid, _, _ := replayFixture(t)
	e.set("ANTHROPIC_BASE_URL=" + deadURL(t))
	// The main agent's Bash reads notes.txt: run again it differs, fed
	// from the recording (read-only replay) it does not.
	e.write("notes.txt", "Other notes.\n")
	all := decodeReplay(t, e.run("", "replay", "--json", sid))
	if !all.Diverged || all.Divergences[0].Tool != "Bash" || all.Divergences[0].Agent != "main" || all.Divergences[0].Turn != 1 {
		t.Fatalf("with every tool run again, want main's Bash at turn 1 to diverge: %+v", all)
	}
	ro := e.run("", "replay", "--check", "--tools", "read-only", sid)
	if ro.code != 0 {
		t.Fatalf("read-only replay: exit %d\n%s\n%s", ro.code, ro.stdout, ro.stderr)
	}
	// Read still runs for real in a read-only replay.
	e.write("stock.go", "package stock\n")
	if p := e.run("", "replay", "--check", "--tools", "read-only", sid); p.code != 3 || !strings.Contains(p.stdout, "tool Read") {
		t.Errorf("read-only replay after stock.go changed: exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
}

func TestReplayOneSubagent(t *testing.T) {
	e, sid, childID, _ := replayFixture(t)
	e.set("ANTHROPIC_BASE_URL=" + deadURL(t))
	p := e.run("", "replay", "--json", "--check", "--agent", childID, sid)
	if p.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	j := decodeReplay(t, p)
	if j.AgentType != "reviewer" || j.TurnsReplayed != 3 || j.Diverged || !strings.Contains(j.Result, "REVIEW: stock.go:4") {
		t.Errorf("the reviewer replayed alone: %+v", j)
	}
	if p := e.run("", "replay", "--agent", sid, sid); p.code != 1 || !strings.Contains(p.stderr, "not a subagent run of session") {
		t.Errorf("--agent naming the main session: exit %d, stderr %s", p.code, p.stderr)
	}
}

func TestReplayLiveModel(t *testing.T) {
	e, sid, _, _ := replayFixture(t)
	live := testkit.NewAnthropic(t, func(testkit.Request) testkit.Reply { return testkit.Reply{Text: "LIVE ANSWER"} })
	e.set("ANTHROPIC_BASE_URL=" + live.URL)

	// From turn 2 of the main agent: turn 1 (and the whole reviewer run
	// it started) is replayed, turn 2 is the live model's, which sees the
	// replayed history.
	j := decodeReplay(t, e.run("", "replay", "--json", "--from-turn", "2", "--model", "claude-sonnet-5-5", sid))
	if j.TurnsReplayed != 4 || j.TurnsLive != 1 || j.Diverged || j.Result != "LIVE ANSWER" {
		t.Errorf("--from-turn 2: %+v", j)
	}
	reqs := live.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "REVIEW: stock.go:4") || !strings.Contains(string(reqs[0].Body), "Meeting notes.") {
		t.Fatalf("the live model got %d requests; want one carrying the replayed results", len(reqs))
	}

	// After a divergence the diverged agent goes on live instead of stopping.
	e.write("stock.go", "package stock\n")
	j = decodeReplay(t, e.run("", "replay", "--json", "--model", "claude-sonnet-5-5", sid))
	if !j.Diverged || j.Stopped || j.TurnsLive < 1 || j.Divergences[0].Tool != "Read" || j.Divergences[0].Agent != "reviewer" {
		t.Errorf("--model after a divergence: %+v", j)
	}
	var sawChanged bool
	for _, r := range live.Requests()[1:] {
		if strings.Contains(string(r.Body), "REPLAY-REVIEWER") && !strings.Contains(string(r.Body), "return -n") {
			sawChanged = true
		}
	}
	if !sawChanged {
		t.Error("the live model never got the reviewer's diverged turn")
	}
	if p := e.run("", "replay", "--from-turn", "2", sid); p.code != 1 || !strings.Contains(p.stderr, "--model") {
		t.Errorf("--from-turn without --model: exit %d, stderr %s", p.code, p.stderr)
	}
}

func TestReplayOutsideGitNeedsInPlace(t *testing.T) {
	srv := testkit.NewAnthropic(t, readThenAnswer)
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	p := e.run("", "-p", "What is the secret word in notes.txt?", "--output-format", "json", "--model", "claude-sonnet-5-5")
	var res struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil {
		t.Fatal(err, p.stdout)
	}
	e.set("ANTHROPIC_BASE_URL=" + deadURL(t))
	if p := e.run("", "replay", res.SessionID); p.code != 1 || !strings.Contains(p.stderr, "--in-place") {
		t.Errorf("not a git repository: exit %d, stderr %s", p.code, p.stderr)
	}
	p = e.run("", "replay", "--check", "--in-place", res.SessionID)
	if p.code != 0 || !strings.Contains(p.stdout, "in place in "+e.dir) {
		t.Errorf("--in-place: exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".git")); err == nil {
		t.Error("a .git appeared in the workspace")
	}
}

// A conversation of two prompts (the second with --continue) replays as
// two runs of one session: every recorded turn is fed.
func TestReplayConversationOfTwoPrompts(t *testing.T) {
	srv := testkit.NewAnthropic(t, readThenAnswer)
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	git(t, e.dir, "init", "--quiet")
	git(t, e.dir, "add", "--all")
	git(t, e.dir, "commit", "--quiet", "-m", "fixture")
	first := e.run("", "-p", "What is the secret word in notes.txt?", "--output-format", "json", "--model", "claude-sonnet-5-5")
	second := e.run("", "-p", "And again?", "--continue", "--output-format", "json", "--model", "claude-sonnet-5-5")
	var a, b struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(first.stdout), &a) != nil || json.Unmarshal([]byte(second.stdout), &b) != nil || a.SessionID == "" || a.SessionID != b.SessionID {
		t.Fatalf("recording: %s\n%s\n%s%s", first.stdout, second.stdout, first.stderr, second.stderr)
	}
	e.set("ANTHROPIC_BASE_URL=" + deadURL(t))
	j := decodeReplay(t, e.run("", "replay", "--json", a.SessionID))
	if j.Diverged || j.TurnsReplayed != 3 || !strings.Contains(j.Result, "PAPAYA") {
		t.Errorf("want the 3 turns of both prompts fed and no divergence: %+v", j)
	}
}

// A run that edits files replays from the state it started in: right
// after the run the workspace holds its edits, and the replay diverges;
// with the workspace reset, it passes and lists what it changed, in the
// scratch tree only.
func TestReplayEditingRun(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		if assistantTurns(req) == 0 {
			return testkit.Reply{Text: "Fixing.", ToolCalls: []testkit.ToolCall{
				{Name: "Edit", Input: map[string]any{"file_path": "stock.go", "old_string": "return -n", "new_string": "return n"}},
				{Name: "Write", Input: map[string]any{"file_path": "CHANGES.md", "content": "Take returns n.\n"}},
			}}
		}
		return testkit.Reply{Text: "Fixed."}
	})
	e := newEnv(t).set("ANTHROPIC_BASE_URL=" + srv.URL)
	e.write("stock.go", "package stock\n\nfunc Take(n int) int { return -n }\n")
	git(t, e.dir, "init", "--quiet")
	git(t, e.dir, "add", "--all")
	git(t, e.dir, "commit", "--quiet", "-m", "fixture")
	p := e.run("", "-p", "Fix Take", "--output-format", "json", "--model", "claude-sonnet-5-5", "--permission-mode", "acceptEdits")
	var res struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil || !strings.Contains(git(t, e.dir, "status", "--porcelain"), "CHANGES.md") {
		t.Fatalf("recording: %v %s\n%s", err, p.stdout, p.stderr)
	}
	e.set("ANTHROPIC_BASE_URL=" + deadURL(t))
	after := decodeReplay(t, e.run("", "replay", "--json", res.SessionID))
	if !after.Diverged || after.Divergences[0].Tool != "Edit" {
		t.Errorf("replayed on the run's own result, the Edit cannot apply: %+v", after)
	}
	git(t, e.dir, "stash", "--include-untracked", "--quiet")
	p = e.run("", "replay", "--json", "--check", res.SessionID)
	j := decodeReplay(t, p)
	if p.code != 0 || j.Diverged || strings.Join(j.FilesChanged, ",") != "CHANGES.md,stock.go" {
		t.Errorf("from the starting state: exit %d, %+v", p.code, j)
	}
	if st := git(t, e.dir, "status", "--porcelain"); strings.TrimSpace(st) != "" {
		t.Errorf("the replay's edits reached the workspace: %s", st)
	}
}
