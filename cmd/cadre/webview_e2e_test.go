package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit/chromium"
)

// lanePair is a main agent that starts three background subagents, one
// call after the other, in a lane of one place (subagents.maxConcurrent
// 1): alpha runs first and asks to run a Bash command, beta and gamma wait
// in the lane, in that order. Each finished
// run's notification makes the main agent answer: alpha's answer is
// Markdown carrying an attack (raw HTML and a javascript: link).
const lanePair = `model: scripted-web
agents:
  main:
    - text: "Three helpers, one at a time."
      tool_use:
        - name: Agent
          input: {description: "Run the checks", subagent_type: alpha, prompt: "Run the checks.", run_in_background: true}
    - tool_use:
        - name: Agent
          input: {description: "Survey the code", subagent_type: beta, prompt: "Survey the code.", run_in_background: true}
    - tool_use:
        - name: Agent
          input: {description: "Write the notes", subagent_type: gamma, prompt: "Write the notes.", run_in_background: true}
    - text: "Launched all three; I will report as they finish."
    - text: |
        ## Findings

        alpha says **all good**; see [the docs](https://example.com/docs) and [click me](javascript:window.__pwned=1).

        <img src=x onerror="window.__pwned=1">

        - one ` + "`code`" + `
        - two

        ` + "```" + `
        <script>window.__pwned=1</script>
        ` + "```" + `
    - text: "beta reported too."
  alpha:
    - text: "Checking."
      tool_use:
        - name: Bash
          input: {command: "echo alpha-checked"}
    - text: "alpha is done: checks pass."
  beta:
    - text: "Looking around."
      tool_use:
        - name: Glob
          input: {pattern: "*.yaml"}
    - text: "beta is done."
  gamma:
    - delay: 120s
      text: "gamma is done"
`

const laneAgents = `{"alpha": {"description": "Runs checks.", "prompt": "You run checks.", "tools": ["Bash"]},
 "beta": {"description": "Surveys code.", "prompt": "You survey code.", "tools": ["Glob", "Read"]},
 "gamma": {"description": "Writes notes.", "prompt": "You write notes."}}`

// waitJS is a promise, for Page.Eval, that resolves with cond's value
// once it is truthy, checked at each change of the page's DOM.
func waitJS(cond string) string {
	return `new Promise((resolve) => {
	  const ok = () => { try { return (` + cond + `); } catch (_) { return false; } };
	  const v = ok();
	  if (v) return resolve(v);
	  new MutationObserver((_, obs) => { const v = ok(); if (v) { obs.disconnect(); resolve(v); } })
	    .observe(document, {childList: true, subtree: true, attributes: true, characterData: true});
	})`
}

// The web view follows a run in headless chromium, as a user would: the
// live home page shows the new run with its waiting-for-approval badge and
// distinct short ids; the session page shows the runtime's states (the
// main agent idle after its answer, two subagents queued in the lane);
// the approval is answered on the page; the conversation shows tool calls
// as cards, background launches and notifications as events, and Markdown
// without letting the answer's HTML or javascript: link through; the
// details panel and the keys work; "Stop run" stops it; an unknown session
// is said to be unknown.
func TestWebViewFollowsARun(t *testing.T) {
	exe := chromiumExe(t)
	e := newEnv(t)
	e.write("scenario.yaml", lanePair)
	s := e.serve("--model", "script:scenario.yaml", "--agents", laneAgents, "--settings", `{"subagents": {"maxConcurrent": 1}}`)

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	b := startBrowser(t, ctx, exe, 1400, 900)
	home, err := b.Open(ctx, s.url+"/?token="+s.token)
	if err != nil {
		t.Fatal(err)
	}
	if err := home.Eval(ctx, waitJS(`document.querySelector("#sessions") && /No sessions yet/.test(document.querySelector("#sessions").textContent)`), nil); err != nil {
		t.Fatalf("the home page: %v", err)
	}

	// A run starts after the home page was drawn: the page shows it, and
	// then its question, without a reload.
	var run struct{ ID string }
	if st := s.post(t, "/api/runs", map[string]any{"prompt": "Check, survey, write."}, &run); st != http.StatusCreated {
		t.Fatalf("start a run: %d", st)
	}
	if err := home.Eval(ctx, waitJS(`(() => {
	  const root = document.querySelector('tr.root[data-session="`+run.ID+`"]');
	  const alpha = [...document.querySelectorAll("#sessions tr.child")].find((r) => /Run the checks/.test(r.textContent));
	  return root && /waiting for approval/.test(root.textContent) && /idle/.test(root.textContent) && alpha && /waiting for approval/.test(alpha.textContent) &&
	    /1 waiting for approval/.test(document.querySelector("h2").textContent);
	})()`), nil); err != nil {
		t.Fatalf("the home page never showed the run waiting for approval: %v", err)
	}
	shot(t, ctx, home, "web-home-approval")

	// The session page: the runtime's states.
	pg, err := b.Open(ctx, s.url+"/#/session/"+run.ID)
	if err != nil {
		t.Fatal(err)
	}
	state := func(agent string) string {
		return `(document.querySelector('tr.agent[data-agent="` + agent + `"]') || {dataset: {}}).dataset.state`
	}
	if err := pg.Eval(ctx, waitJS(state("main")+` === "idle" && `+state("alpha")+` === "running" && `+state("beta")+` === "queued" && `+state("gamma")+` === "queued" &&
	  /alpha.*wants Bash/.test((document.querySelector(".ask .head") || {}).textContent || "")`), nil); err != nil {
		var got string
		pg.Eval(ctx, `[...document.querySelectorAll("tr.agent")].map((r) => r.dataset.agent + ":" + r.dataset.state).join(" ")`, &got)
		t.Fatalf("states %s: want main idle, alpha running (asking), beta and gamma queued: %v", got, err)
	}
	if txt := evalString(t, ctx, pg, `document.querySelector('tr.agent[data-agent="main"]').textContent`); strings.Contains(txt, "NaN") {
		t.Errorf("the main agent's row: %q", txt)
	}
	shot(t, ctx, pg, "web-session-approval")

	// Allowed on the page; alpha finishes, then beta; gamma runs.
	if err := pg.Eval(ctx, `document.querySelector(".ask button.primary").click()`, nil); err != nil {
		t.Fatal(err)
	}
	if err := pg.Eval(ctx, waitJS(state("alpha")+` === "completed" && `+state("beta")+` === "completed" && `+state("gamma")+` === "running" && `+state("main")+` === "idle" &&
	  document.querySelectorAll(".transcript .note").length === 2 && /beta reported too/.test(document.querySelector(".transcript").textContent) && !document.querySelector(".ask")`), nil); err != nil {
		var got string
		pg.Eval(ctx, `[...document.querySelectorAll("tr.agent")].map((r) => r.dataset.agent + ":" + r.dataset.state).join(" ") + " notes:" + document.querySelectorAll(".transcript .note").length`, &got)
		t.Fatalf("after the approval: %s: %v", got, err)
	}

	// Back on the home page, which has followed: every session listed,
	// ids of one minute (their first 8 characters the same) shortened to
	// their distinct ends, subagents titled with their tasks.
	var ids []string
	if err := home.Eval(ctx, waitJS(`(() => {
	  const rows = [...document.querySelectorAll("#sessions tbody tr")];
	  return rows.length === 4 && !/waiting for approval/.test(document.querySelector("#sessions").textContent) && rows.map((r) => r.querySelector("td.id a").textContent);
	})()`), &ids); err != nil {
		t.Fatalf("the home page never listed the four sessions: %v", err)
	}
	// Ids of one minute share their first 8 characters; the page's short
	// ids are their distinct ends.
	var full []string
	home.Eval(ctx, `[...document.querySelectorAll("#sessions tbody tr")].map((r) => r.dataset.session)`, &full)
	seen := map[string]bool{}
	for i, id := range ids {
		if seen[id] || len(id) > 12 || !strings.HasSuffix(strings.ReplaceAll(full[i], "-", ""), strings.TrimPrefix(id, "…")) {
			t.Errorf("short ids %q of %q: want distinct ends of the ids", ids, full)
		}
		seen[id] = true
	}
	if len(full) == 4 && full[0][:8] != full[3][:8] {
		t.Logf("note: these ids differ in their first 8 characters already: %q", full)
	}
	var titles string
	home.Eval(ctx, `[...document.querySelectorAll("#sessions tr.child td.title")].map((td) => td.textContent).join("|")`, &titles)
	for _, want := range []string{"Run the checks", "Survey the code", "Write the notes"} {
		if !strings.Contains(titles, want) {
			t.Errorf("subagent rows titled %q, want each task's description (%q missing)", titles, want)
		}
	}
	if strings.Contains(titles, "subagent)") {
		t.Errorf("subagent rows titled %q", titles)
	}
	shot(t, ctx, home, "web-home")
	// Keys on the home page: j to the first row, Enter opens it.
	for _, k := range []string{"j", "Enter"} {
		for _, typ := range []string{"keyDown", "keyUp"} {
			params := map[string]any{"type": typ, "key": k}
			if k == "Enter" {
				params["code"], params["windowsVirtualKeyCode"] = "Enter", 13
			}
			if err := home.Key(ctx, params); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := home.Eval(ctx, waitJS(`location.hash === "#/session/`+run.ID+`" && document.querySelector("tr.agent")`), nil); err != nil {
		t.Errorf("j, Enter on the home page did not open the run: %v", err)
	}

	// The conversation: cards, events, Markdown, and no attack.
	var conv struct {
		Pwned, Img, JSLink, Script bool
		Cards                      []string
		Launched, Notes            int
		NoteText, DocsHref, Raw    string
		Heading, Items, Code       int
		Input                      string
	}
	if err := pg.Eval(ctx, `(() => {
	  const tr = document.querySelector(".transcript");
	  return {
	    Pwned: window.__pwned !== undefined, Img: !!tr.querySelector("img"), Script: !!tr.querySelector("script"),
	    JSLink: [...tr.querySelectorAll("a")].some((a) => !/^(https?:|mailto:|#|$)/.test(a.getAttribute("href") || "") && a.getAttribute("href") !== "#"),
	    Cards: [...tr.querySelectorAll("details.card")].map((c) => c.dataset.tool),
	    Launched: tr.querySelectorAll("details.card.launched").length,
	    Notes: tr.querySelectorAll(".note").length,
	    NoteText: [...tr.querySelectorAll(".note summary")].map((n) => n.textContent).join(" | "),
	    DocsHref: ([...tr.querySelectorAll(".md a")].find((a) => a.textContent === "the docs") || {}).href || "",
	    Raw: tr.textContent,
	    Heading: tr.querySelectorAll(".md h2").length, Items: tr.querySelectorAll(".md li").length, Code: tr.querySelectorAll(".md pre code, .md code").length,
	    Input: (tr.querySelector("details.card[data-tool=Agent] table.input") || {}).textContent || "",
	  };
	})()`, &conv); err != nil {
		t.Fatal(err)
	}
	if conv.Pwned || conv.Img || conv.Script || conv.JSLink {
		t.Errorf("the answer's HTML or javascript: link got through: %+v", conv)
	}
	if conv.DocsHref != "https://example.com/docs" || conv.Heading != 1 || conv.Items != 2 || conv.Code < 2 {
		t.Errorf("Markdown: link %q, %d headings, %d items, %d code; want it rendered", conv.DocsHref, conv.Heading, conv.Items, conv.Code)
	}
	for _, want := range []string{`<img src=x onerror="window.__pwned=1">`, "<script>window.__pwned=1</script>", "click me"} {
		if !strings.Contains(conv.Raw, want) {
			t.Errorf("the conversation lacks %q as text", want)
		}
	}
	for _, bad := range []string{"<task-notification>", "Async agent launched", `{"description"`} {
		if strings.Contains(conv.Raw, bad) {
			t.Errorf("the conversation shows the wire format: %q", bad)
		}
	}
	if fmt.Sprint(conv.Cards) != "[Agent Agent Agent]" || conv.Launched != 3 {
		t.Errorf("cards %v (%d launched), want the three Agent calls as launch cards", conv.Cards, conv.Launched)
	}
	if !strings.Contains(conv.Input, "subagent_type") || !strings.Contains(conv.Input, "Run the checks.") {
		t.Errorf("an Agent card's input %q, want its fields", conv.Input)
	}
	if conv.Notes != 2 || !strings.Contains(conv.NoteText, "alpha") || !strings.Contains(conv.NoteText, "completed") || !strings.Contains(conv.NoteText, "Run the checks") {
		t.Errorf("notification events %d: %q; want alpha's and beta's, completed, with their tasks", conv.Notes, conv.NoteText)
	}
	shot(t, ctx, pg, "web-conversation")

	// Keys: j moves to the next agent, Enter opens it (its transcript and
	// details), Esc closes the details, ? lists the keys.
	key := func(k string) {
		t.Helper()
		for _, typ := range []string{"keyDown", "keyUp"} {
			params := map[string]any{"type": typ, "key": k}
			if k == "Enter" {
				params["code"], params["windowsVirtualKeyCode"] = "Enter", 13
			}
			if k == "Escape" {
				params["code"], params["windowsVirtualKeyCode"] = "Escape", 27
			}
			if err := pg.Key(ctx, params); err != nil {
				t.Fatal(err)
			}
		}
	}
	key("j")
	key("Enter")
	var panel struct{ Agent, Prompt, Tools, Model, Text string }
	if err := pg.Eval(ctx, waitJS(`(() => { const p = document.querySelector("aside.panel"); return !p.hidden && /alpha/.test(p.querySelector(".panel-head").textContent) &&
	  /Run the checks\./.test(p.textContent) && /alpha-checked/.test(document.querySelector(".transcript").textContent) &&
	  {Agent: p.querySelector(".panel-head b").textContent, Prompt: p.querySelector(".prompt").textContent, Tools: p.querySelector(".tools").textContent, Text: p.textContent}; })()`), &panel); err != nil {
		t.Fatalf("j, Enter did not open alpha: %v", err)
	}
	if panel.Tools != "Bash" || !strings.Contains(panel.Text, "turns") || !strings.Contains(panel.Text, "tokens") || !strings.Contains(panel.Text, "model") {
		t.Errorf("alpha's details: %+v", panel)
	}
	shot(t, ctx, pg, "web-details")
	key("Escape")
	if !evalBool(t, ctx, pg, `document.querySelector("aside.panel").hidden`) {
		t.Errorf("Esc did not close the details")
	}
	key("?")
	if !evalBool(t, ctx, pg, `!!document.getElementById("help") && /Enter/.test(document.getElementById("help").textContent)`) {
		t.Errorf("? did not list the keys")
	}
	key("Escape")

	// Stop run: everything stops; the page says how it ended.
	if err := pg.Eval(ctx, `document.querySelector('button[data-action="stop"]').click()`, nil); err != nil {
		t.Fatal(err)
	}
	if err := pg.Eval(ctx, waitJS(state("main")+` === "killed" && `+state("gamma")+` === "killed" && !document.querySelector('button[data-action="stop"]')`), nil); err != nil {
		var got string
		pg.Eval(ctx, `[...document.querySelectorAll("tr.agent")].map((r) => r.dataset.agent + ":" + r.dataset.state).join(" ")`, &got)
		t.Fatalf("after Stop run: %s: %v", got, err)
	}
	var runs []struct{ State string }
	getJSON(t, s.at("/api/runs"), &runs)
	if len(runs) != 1 || runs[0].State != "killed" {
		t.Errorf("runs after the stop: %+v", runs)
	}

	// An unknown session is said to be unknown, not drawn with NaN.
	if err := pg.Eval(ctx, `location.hash = "#/session/0192f3c4-5e6f-7abc-8def-0123456789ab"`, nil); err != nil {
		t.Fatal(err)
	}
	var nf string
	if err := pg.Eval(ctx, waitJS(`document.querySelector(".notfound") && document.body.textContent`), &nf); err != nil {
		t.Fatalf("an unknown session: %v", err)
	}
	if !strings.Contains(nf, "No such session") || strings.Contains(nf, "NaN") {
		t.Errorf("an unknown session's page: %q", nf)
	}
	shot(t, ctx, pg, "web-unknown-session")
}

func evalString(t *testing.T, ctx context.Context, p *chromium.Page, expr string) string {
	t.Helper()
	var v string
	if err := p.Eval(ctx, expr, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
