package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/npm"
)

// lastUser is the last user message of an Anthropic request: its text and
// its tool results' text.
func lastUser(req testkit.Request) (text string, results []string, n int) {
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(req.Body, &body)
	n = len(body.Messages)
	if n == 0 {
		return "", nil, 0
	}
	last := body.Messages[n-1]
	var s string
	if json.Unmarshal(last.Content, &s) == nil {
		return s, nil, n
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(last.Content, &blocks)
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text += b.Text
		case "tool_result":
			var rs string
			if json.Unmarshal(b.Content, &rs) != nil {
				var parts []struct{ Text string }
				_ = json.Unmarshal(b.Content, &parts)
				for _, p := range parts {
					rs += p.Text
				}
			}
			results = append(results, rs)
		}
	}
	return text, results, n
}

// nodeScript copies testdata/a2a/name beside a node_modules link (ES
// modules resolve packages from the script's folder up) and returns it.
func nodeScript(t *testing.T, name string) string {
	t.Helper()
	modules := npm.Modules(t, "@a2a-js/sdk", "express")
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "a2a", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// a2aScript is the model behind `cadre serve` for the JS client: "MAIN
// split" starts two subagents and sums up their answers; a child answers
// its prompt; "MAIN again" says how long the conversation is; "STALL"
// never gets an answer.
func a2aScript(req testkit.Request) testkit.Reply {
	text, results, n := lastUser(req)
	switch {
	case len(results) > 0:
		return testkit.Reply{Text: "both done: " + strings.Join(results, " | ")}
	case strings.Contains(text, "CHILD"):
		return testkit.Reply{Text: "child finished " + text[strings.Index(text, "CHILD"):]}
	case strings.Contains(text, "MAIN split"):
		return testkit.Reply{ToolCalls: []testkit.ToolCall{
			{ID: "toolu_a", Name: "Agent", Input: map[string]any{"description": "part A", "prompt": "CHILD part A"}},
			{ID: "toolu_b", Name: "Agent", Input: map[string]any{"description": "part B", "prompt": "CHILD part B"}},
		}}
	case strings.Contains(text, "MAIN again"):
		return testkit.Reply{Text: "again, after " + strings.Repeat("I", n) + " messages"}
	case strings.Contains(text, "STALL"):
		return testkit.Reply{Stall: testkit.StallNoResponse}
	}
	return testkit.Reply{Text: "unexpected: " + text}
}

// TestA2AJSClientDrivesServe is issue 13's acceptance with the official JS
// SDK's client against the real `cadre serve`: a prompt whose model starts
// two subagents, streamed (both start and finish, the answer arrives), a
// second message in the same context continues the session, and cancel
// works.
func TestA2AJSClientDrivesServe(t *testing.T) {
	for _, token := range []string{"", "s3cret"} {
		t.Run("token="+token, func(t *testing.T) { jsClientDrivesServe(t, token) })
	}
}

// jsClientDrivesServe runs client.mjs against `cadre serve`, with a token
// when token is not "" (the JS client then sends it as a bearer token).
func jsClientDrivesServe(t *testing.T, token string) {
	script := nodeScript(t, "client.mjs")
	e, _ := anthropicEnv(t, a2aScript)
	args := []string{"--model", sonnet}
	if token != "" {
		args = append(args, "--token", token)
	}
	s := e.serve(args...)
	cmd := exec.Command("node", script, s.url, s.token)
	cmd.Dir, cmd.Env = e.dir, e.vars
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runWithin(t, cmd, &errb, 120*time.Second)
	var rep struct {
		Errors []string
		Card   struct {
			Name             string
			Skills, Security []string
		}
		First struct {
			States, Started, Finished []string
			Answer, TaskID, ContextID string
		}
		Second struct{ ContextID, State, Answer string }
		Cancel struct {
			States           []string
			Returned, Stored string
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("client output is not its report (%v):\n%s\nstderr:\n%s\nserve stderr:\n%s", err, out.String(), errb.String(), s.stderr())
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("client failed: %s\nserve stderr:\n%s", strings.Join(rep.Errors, "\n"), s.stderr())
	}
	if rep.Card.Name != "cadre" || !strings.Contains(strings.Join(rep.Card.Skills, ","), "general-purpose") {
		t.Errorf("card %+v", rep.Card)
	}
	// A token always (issue 22): the card says so whether it was given or
	// generated.
	if strings.Join(rep.Card.Security, ",") != "bearer" {
		t.Errorf("card security schemes %v with token %q, want bearer", rep.Card.Security, token)
	}
	f := rep.First
	if strings.Join(f.Started, ",") != "part A,part B" && strings.Join(f.Started, ",") != "part B,part A" {
		t.Errorf("subagents seen starting: %q, want part A and part B", f.Started)
	}
	if strings.Join(f.Finished, ",") != "completed,completed" {
		t.Errorf("subagents seen finishing: %q", f.Finished)
	}
	if !strings.Contains(f.Answer, "child finished CHILD part A") || !strings.Contains(f.Answer, "child finished CHILD part B") {
		t.Errorf("answer %q", f.Answer)
	}
	if len(f.States) == 0 || f.States[len(f.States)-1] != "TASK_STATE_COMPLETED" {
		t.Errorf("states %v, want completed last", f.States)
	}
	if rep.Second.ContextID != f.ContextID || rep.Second.State != "TASK_STATE_COMPLETED" || !strings.Contains(rep.Second.Answer, "after IIIII messages") {
		t.Errorf("second message %+v: want the same context, completed, its model seeing the first exchange (prompt, Agent calls, their results, answer) and the new message", rep.Second)
	}
	if rep.Cancel.Returned != "TASK_STATE_CANCELED" || rep.Cancel.Stored != "TASK_STATE_CANCELED" {
		t.Errorf("cancel %+v", rep.Cancel)
	}
	infos := listSessions(t, e)
	var withContext bool
	for _, in := range infos {
		withContext = withContext || in.ID == f.ContextID
	}
	if !withContext {
		t.Errorf("no session %s (the context id) among %+v", f.ContextID, infos)
	}
}

// jsPeer is peer.mjs running: an A2A agent built with @a2a-js/sdk and
// express.
type jsPeer struct {
	url     string
	mu      sync.Mutex
	lines   []string
	changed chan struct{} // closed and replaced at each line
	done    chan struct{}
}

// wait waits (up to d) for a line starting with prefix.
func (p *jsPeer) wait(prefix string, d time.Duration) bool {
	deadline := time.After(d)
	for {
		p.mu.Lock()
		ch := p.changed
		p.mu.Unlock()
		if p.saw(prefix) {
			return true
		}
		select {
		case <-ch:
		case <-p.done:
			return p.saw(prefix)
		case <-deadline:
			return false
		}
	}
}

func (p *jsPeer) saw(prefix string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

func startJSPeer(t *testing.T, auth string) *jsPeer {
	t.Helper()
	script := nodeScript(t, "peer.mjs")
	cmd := exec.Command("node", script, auth)
	cmd.Dir = filepath.Dir(script)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &jsPeer{done: make(chan struct{}), changed: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
			if u, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				urls <- u
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
	})
	select {
	case p.url = <-urls:
	case <-p.done:
		t.Fatalf("the JS peer exited: %s", errb.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("the JS peer did not start in 60s: %s", errb.String())
	}
	return p
}

// peerScript is the main agent that asks the remote "jspeer" agent, in
// the background when bg, and answers with what came back (the tool result
// or the notification).
func peerScript(bg bool) testkit.Handler {
	return func(req testkit.Request) testkit.Reply {
		text, results, _ := lastUser(req)
		switch {
		case len(results) > 0 && !bg:
			return testkit.Reply{Text: "main got: " + results[0]}
		case len(results) > 0:
			return testkit.Reply{Text: "launched; waiting"}
		case strings.Contains(text, "js peer answer"):
			return testkit.Reply{Text: "notified: " + text}
		}
		in := map[string]any{"subagent_type": "jspeer", "description": "ask the JS peer", "prompt": "hello peer", "run_in_background": bg}
		if !bg {
			// A remote call waits only when given a timeout (S-W2).
			in["timeout_seconds"] = 60
		}
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_peer", Name: "Agent", Input: in}}}
	}
}

// TestA2AJSPeerAsRemoteSubagent: an agent built with @a2a-js/sdk and
// express is a remote subagent of cadre (url: in its definition, the auth
// header from the definition), in the foreground and in the background.
func TestA2AJSPeerAsRemoteSubagent(t *testing.T) {
	peer := startJSPeer(t, "Bearer t0k")
	agents, _ := json.Marshal(map[string]any{"jspeer": map[string]any{
		"description": "An agent on another server", "url": peer.url, "headers": map[string]string{"Authorization": "Bearer t0k"},
	}})
	for _, bg := range []bool{false, true} {
		e, _ := anthropicEnv(t, peerScript(bg))
		p := ok(t, e.run("", "-p", "ask the peer", "--model", sonnet, "--agents", string(agents)))
		if !strings.Contains(p.stdout, "js peer answer: hello peer") {
			t.Errorf("background=%v: output %q does not carry the peer's answer; stderr: %s", bg, p.stdout, p.stderr)
		}
		if bg && !strings.Contains(p.stdout, "notified: ") {
			t.Errorf("the background run's notification did not reach the main agent: %q", p.stdout)
		}
	}
}

// TestA2ARemoteSubagentStopCancelsTheJSPeer: the main agent starts the
// JS peer in the background on slow work, then stops it with TaskStop: the
// peer gets the A2A cancel for its task, and the run ends killed.
func TestA2ARemoteSubagentStopCancelsTheJSPeer(t *testing.T) {
	peer := startJSPeer(t, "Bearer t0k")
	agents, _ := json.Marshal(map[string]any{"jspeer": map[string]any{
		"description": "An agent on another server", "url": peer.url, "headers": map[string]string{"Authorization": "Bearer t0k"},
	}})
	h := func(req testkit.Request) testkit.Reply {
		text, results, _ := lastUser(req)
		switch {
		case len(results) > 0 && strings.Contains(results[0], "Async agent launched"):
			id := strings.Fields(results[0][strings.Index(results[0], "agentId: ")+len("agentId: "):])[0]
			// Stop it once the peer works on it.
			peer.wait("working ", 30*time.Second)
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_stop", Name: "TaskStop", Input: map[string]any{"task_id": id}}}}
		case len(results) > 0:
			return testkit.Reply{Text: "stop said: " + results[0]}
		case strings.Contains(text, "ask the peer"):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_peer", Name: "Agent", Input: map[string]any{
				"subagent_type": "jspeer", "description": "slow work", "prompt": "SLOW work", "run_in_background": true,
			}}}}
		}
		return testkit.Reply{Text: "noted: " + text}
	}
	e, _ := anthropicEnv(t, h)
	p := ok(t, e.run("", "-p", "ask the peer", "--model", sonnet, "--agents", string(agents), "--output-format", "stream-json", "--verbose"))
	if !peer.wait("canceled ", 30*time.Second) {
		t.Fatalf("the peer never got the cancel; cadre's output:\n%s\n%s", p.stdout, p.stderr)
	}
	if !strings.Contains(p.stdout, `"status":"stopped"`) && !strings.Contains(p.stdout, `"status":"killed"`) {
		t.Errorf("no stopped task notification in:\n%s", p.stdout)
	}
}
