package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit/chromium"
)

// slowPair is a scripted main agent that starts two subagents at once,
// alpha and beta; each makes one tool call (beta's, a Bash command, needs
// approval), then thinks for a minute, so the page is looked at while
// both run.
const slowPair = `model: scripted-slow
agents:
  main:
    - text: "Two helpers at once."
      tool_use:
        - name: Agent
          input: {description: "Survey the code", subagent_type: alpha, prompt: "Survey the code."}
        - name: Agent
          input: {description: "Check the tests", subagent_type: beta, prompt: "Check the tests."}
    - text: "Both are done."
  alpha:
    - text: "Looking around."
      tool_use:
        - name: Glob
          input: {pattern: "*.yaml"}
    - delay: 60s
      text: "alpha is done"
  beta:
    - text: "Checking."
      tool_use:
        - name: Bash
          input: {command: "echo beta-checked"}
    - delay: 60s
      text: "beta is done"
`

const slowAgents = `{"alpha": {"description": "Surveys code.", "prompt": "You survey code."},
 "beta": {"description": "Checks tests.", "prompt": "You check tests."}}`

// The web view, rendered by headless chromium while a run's two subagents
// run: both agents are on the session's page, in the tree under the main
// agent, each with a running bar on the timeline and its tool call
// marked; beta's approval is shown and answered on the page; a click shows
// a transcript; a stop reaches the page over the event stream. The DOM
// and a screenshot are kept among the test's artifacts (go test -artifacts).
func TestWebViewShowsTwoRunningSubagents(t *testing.T) {
	exe := chromiumExe(t)
	e := newEnv(t)
	e.write("scenario.yaml", slowPair)
	s := e.serve("--model", "script:scenario.yaml", "--agents", slowAgents)
	runID := s.startRun(t, "Survey and check.")
	waitStarted(t, s, runID)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := startBrowser(t, ctx, exe, 1400, 800)
	page := openSession(t, ctx, b, s, runID)
	// Wait, on the page's own changes, until both subagents' rows are
	// drawn with a running bar and a tool-call mark, and beta's question
	// is shown.
	const drawn = `new Promise((resolve) => {
	  const ok = () => ["alpha", "beta"].every((a) => document.querySelector('tr.agent[data-agent="' + a + '"] .bar.s-running') &&
	    document.querySelector('tr.agent[data-agent="' + a + '"] .tick')) &&
	    /beta.*wants Bash/.test((document.querySelector(".ask .head") || {}).textContent || "");
	  if (ok()) return resolve(true);
	  new MutationObserver((_, obs) => { if (ok()) { obs.disconnect(); resolve(true); } })
	    .observe(document, {childList: true, subtree: true, attributes: true});
	})`
	if err := page.Eval(ctx, drawn, nil); err != nil {
		t.Fatalf("the page never showed both running subagents: %v", err)
	}
	shot(t, ctx, page, "web-session")
	dom, err := page.DOM(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// They still run: the page showed them live, not after the fact.
	var subs []struct {
		Agent   string
		Running bool
	}
	getJSON(t, s.at("/api/runs/"+runID+"/subagents"), &subs)
	if len(subs) != 2 || !subs[0].Running || !subs[1].Running {
		t.Errorf("subagents after the capture: %+v, want both still running", subs)
	}
	var rows []struct {
		Agent  string `json:"agent"`
		Bar    bool   `json:"bar"`
		Width  float64
		Ticks  int    `json:"ticks"`
		Depth  bool   `json:"child"`
		Status string `json:"status"`
		Task   string `json:"task"`
	}
	if err := page.Eval(ctx, `[...document.querySelectorAll("tr.agent")].map((tr) => ({
	  agent: tr.dataset.agent, bar: !!tr.querySelector(".bar"), Width: tr.querySelector(".bar").getBoundingClientRect().width,
	  ticks: tr.querySelectorAll(".tick").length, child: !!tr.querySelector(".tree"),
	  status: tr.querySelector(".status").textContent, task: tr.querySelector(".title").textContent}))`, &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].Agent != "main" {
		t.Fatalf("agent rows %+v, want main, then its two subagents", rows)
	}
	seen := map[string]string{}
	for _, r := range rows[1:] {
		seen[r.Agent] = r.Task
		if !r.Bar || r.Width < 1 || r.Ticks != 1 || !r.Depth || r.Status != "running" {
			t.Errorf("row %+v: want a running child with a visible bar and its one tool call marked", r)
		}
	}
	if !strings.Contains(seen["alpha"], "Survey the code") || !strings.Contains(seen["beta"], "Check the tests") {
		t.Errorf("rows %v, want alpha and beta with their tasks", seen)
	}
	if rows[0].Ticks != 2 {
		t.Errorf("the main agent's row marks %d calls, want its 2 Agent calls", rows[0].Ticks)
	}
	for _, want := range []string{`data-agent="alpha"`, `data-agent="beta"`, "Survey the code", "Check the tests", "echo beta-checked", "Allow once"} {
		if !strings.Contains(dom, want) {
			t.Errorf("the DOM lacks %q", want)
		}
	}
	// Allowed on the page: the question goes, beta's command runs, and a
	// click on beta shows its transcript with the command's output.
	if err := page.Eval(ctx, `document.querySelector(".ask button.primary").click()`, nil); err != nil {
		t.Fatal(err)
	}
	var text string
	if err := page.Eval(ctx, `new Promise((resolve) => {
	  document.querySelector('tr.agent[data-agent="beta"] td.name').click();
	  const t = () => document.querySelector(".transcript").textContent;
	  const ran = () => [...document.querySelectorAll(".transcript .result")].some((r) => r.textContent.includes("beta-checked"));
	  const ok = () => t().includes("Check the tests.") && ran() && !document.querySelector(".ask");
	  if (ok()) return resolve(t());
	  new MutationObserver((_, obs) => { if (ok()) { obs.disconnect(); resolve(t()); } })
	    .observe(document, {childList: true, subtree: true, characterData: true});
	})`, &text); err != nil {
		t.Fatalf("beta's transcript: %v", err)
	}
	if !strings.Contains(text, "Check the tests.") {
		t.Errorf("beta's transcript: %q", text)
	}

	// Live: alpha stopped through the API turns orange (killed) on the page
	// without a reload, carried by the event stream.
	if connected := evalBool(t, ctx, page, `!!document.querySelector("#conn.live")`); !connected {
		t.Errorf("the page is not connected to the run's event stream")
	}
	for i, sa := range subs { // numbered from 1 in start order, as /subagents numbers them
		if sa.Agent == "alpha" {
			if st := s.post(t, "/api/runs/"+runID+"/subagents/"+strconv.Itoa(i+1)+"/stop", nil, nil); st != http.StatusOK {
				t.Fatalf("stop alpha (#%d): %d", i+1, st)
			}
		}
	}
	if err := page.Eval(ctx, `new Promise((resolve) => {
	  const ok = () => document.querySelector('tr.agent[data-agent="alpha"] .bar.s-killed') && document.querySelector('tr.agent[data-agent="beta"] .bar.s-running');
	  if (ok()) return resolve(true);
	  new MutationObserver((_, obs) => { if (ok()) { obs.disconnect(); resolve(true); } })
	    .observe(document, {childList: true, subtree: true, attributes: true});
	})`, nil); err != nil {
		t.Fatalf("alpha's stop never reached the page: %v", err)
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-s.done
}

func evalBool(t *testing.T, ctx context.Context, p *chromium.Page, expr string) bool {
	t.Helper()
	var v bool
	if err := p.Eval(ctx, expr, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// waitStarted reads the run's event stream until alpha's tool call has
// run and beta's waits for approval.
func waitStarted(t *testing.T, s *served, id string) {
	t.Helper()
	called, asked := 0, false
	followEvents(t, s, id, "alpha's call ran and beta's was asked", func(data string) bool {
		if strings.HasPrefix(data, "[") && strings.Contains(data, `"tool":"Bash"`) {
			asked = true
		}
		var ev struct {
			Type    string `json:"type"`
			Parent  string `json:"parent_tool_use_id"`
			Message struct {
				Content []struct{ Type string } `json:"content"`
			} `json:"message"`
		}
		json.Unmarshal([]byte(data), &ev)
		if ev.Type == "user" && ev.Parent != "" && len(ev.Message.Content) > 0 && ev.Message.Content[0].Type == "tool_result" {
			called++
		}
		return called == 1 && asked
	})
}

// followEvents reads the run's event stream (SSE), handing each event's
// data to done, until done says so; the stream ending first, or a minute
// passing, fails t, saying what was awaited.
func followEvents(t *testing.T, s *served, id, what string, done func(data string) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.at("/api/runs/"+id+"/events"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && done(data) {
			return
		}
	}
	t.Fatalf("the stream ended before %s: %v", what, sc.Err())
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestCrossOriginPageCannotStartARun is issue 22's server door in a real
// browser: with the web view open (its token in the cookie), a page of
// another site sends the "simple" requests no browser preflights — a
// text/plain POST to /api/runs raising the mode to bypassPermissions, one
// to /a2a/ — and tries to read the sessions. No run starts and nothing is
// read.
func TestCrossOriginPageCannotStartARun(t *testing.T) {
	exe := chromiumExe(t)
	e := newEnv(t)
	e.write("scenario.yaml", slowPair)
	s := e.serve("--model", "script:scenario.yaml", "--agents", slowAgents)
	_, port, _ := strings.Cut(strings.TrimPrefix(s.url, "http://"), ":")
	attack := `<!doctype html><body><script>
const target = "http://127.0.0.1:` + port + `";
const run = JSON.stringify({prompt: "pwn", permission_mode: "bypassPermissions"});
const a2a = JSON.stringify({jsonrpc: "2.0", id: 1, method: "message/send",
  params: {message: {role: "user", messageId: "m1", parts: [{kind: "text", text: "pwn"}]}}});
Promise.allSettled([
  fetch(target + "/api/runs", {method: "POST", mode: "no-cors", credentials: "include", headers: {"Content-Type": "text/plain"}, body: run}),
  fetch(target + "/a2a/", {method: "POST", mode: "no-cors", credentials: "include", headers: {"Content-Type": "text/plain"}, body: a2a}),
  fetch(target + "/api/sessions", {credentials: "include"}).then((r) => r.text()),
]).then((rs) => {
  const d = document.createElement("pre");
  d.id = "done";
  d.textContent = JSON.stringify(rs.map((r) => r.status + (typeof r.value === "string" ? ":" + r.value : "")));
  document.body.appendChild(d);
});
</script></body>`
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, attack)
	}))
	defer evil.Close()
	_, evilPort, _ := strings.Cut(strings.TrimPrefix(evil.URL, "http://"), ":")

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	b := startBrowser(t, ctx, exe, 1000, 700)
	// The user's web view, opened from the URL cadre serve printed.
	view, err := b.Open(ctx, s.url+"/?token="+s.token)
	if err != nil {
		t.Fatal(err)
	}
	const loaded = `new Promise((resolve) => {
	  const ok = () => location.host.startsWith("127.0.0.1") && document.readyState === "complete" && !location.search.includes("token");
	  if (ok()) return resolve(true);
	  new MutationObserver((_, obs) => { if (ok()) { obs.disconnect(); resolve(true); } })
	    .observe(document, {childList: true, subtree: true, attributes: true});
	})`
	if err := view.Eval(ctx, loaded, nil); err != nil {
		t.Fatalf("the web view did not load (and drop the token from its URL): %v", err)
	}
	// Another site: localhost is not 127.0.0.1 to the browser.
	page, err := b.Open(ctx, "http://localhost:"+evilPort+"/")
	if err != nil {
		t.Fatal(err)
	}
	var done string
	if err := page.Eval(ctx, `new Promise((resolve) => {
	  const get = () => document.getElementById("done");
	  if (get()) return resolve(get().textContent);
	  new MutationObserver((_, obs) => { if (get()) { obs.disconnect(); resolve(get().textContent); } })
	    .observe(document, {childList: true, subtree: true});
	})`, &done); err != nil {
		t.Fatalf("the attack page did not finish: %v", err)
	}
	if strings.Contains(done, "session") || strings.Contains(done, "fulfilled:[") {
		t.Errorf("the other site read the sessions: %s", done)
	}
	var runs []map[string]any
	getJSON(t, s.at("/api/runs"), &runs)
	if len(runs) != 0 {
		t.Errorf("a cross-origin page started %d run(s): %v", len(runs), runs)
	}
	var sessions []map[string]any
	getJSON(t, s.at("/api/sessions"), &sessions)
	if len(sessions) != 0 {
		t.Errorf("a cross-origin page started %d session(s) (over A2A?)", len(sessions))
	}
	t.Logf("the attack page saw: %s", done)
}
