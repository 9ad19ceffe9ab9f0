package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// boardSubject is task #2's subject: a model's attack on the web view,
// which the board must show as the characters it is.
const boardSubject = `<img src=x onerror="window.__pwned=1"> the printer`

// TestWebViewTeamBoard (issue 26, the web view's team board): a scripted
// lead plans three tasks, #3 blocked by #1, and adds two teammates of
// different agent types; alice claims #1 and holds it until the test lets
// her complete it, bob claims #2 and goes idle. Beside the timeline the
// board shows the tasks by status with their owners, #3 waiting on #1,
// and the roster with each teammate's type, state and task; #2's subject,
// an <img onerror> attack, is text. When alice completes #1 the board
// follows without a reload: #1 completed, #3 waits on nothing, alice idle.
func TestWebViewTeamBoard(t *testing.T) {
	exe := chromiumExe(t)
	release := newBGFlag() // alice may complete #1
	e, _ := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch teammateOf(c) {
		case "alice":
			r := nextStep(c, []testkit.ToolCall{
				taskUpdate("1", "status", "in_progress"),
				taskUpdate("1", "status", "completed"),
			}, testkit.Reply{Text: "ALICE-IDLE: the parser is done"})
			if len(c.results("TaskUpdate")) == 1 {
				r.Wait = release.ch
			}
			return r
		case "bob":
			return nextStep(c, []testkit.ToolCall{taskUpdate("2", "status", "in_progress")}, testkit.Reply{Text: "BOB-IDLE: on it later"})
		}
		if c.child() {
			return testkit.Reply{Text: "TEST-HARNESS-ERROR: a child that is no teammate"}
		}
		if r, ok := setUpTeam(c, boardSubject, "Take the parser.", "Take the printer."); ok {
			return r
		}
		return testkit.Reply{Text: "LEAD-ACK"}
	}))
	t.Cleanup(release.set) // before the fake server closes
	e.set("CADRE_AGENT_TEAMS=1")
	s := e.serve("--model", sonnet, "--agents", `{"tester": {"description": "Tests code.", "prompt": "TESTER-PROMPT: you test code.", "tools": ["Read", "Grep"]}}`)

	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	b := startBrowser(t, ctx, exe, 1500, 900)
	id := s.startRun(t, "build the pretty-printer with a team")
	pg := openSession(t, ctx, b, s, id)

	// board reads the board as the user sees it: each column's cards
	// (id, owner, what it waits on), the roster's rows.
	const board = `(() => {
	  const col = (c) => [...document.querySelectorAll('.board .tcol[data-column="' + c + '"] .tcard')]
	    .map((k) => "#" + k.dataset.task + ":" + (k.dataset.owner || "-") + (k.querySelector(".waits") ? ":waits " + k.querySelector(".waits").dataset.waiting : "")).join(" ");
	  const mates = [...document.querySelectorAll(".board .roster tr")].map((r) => r.dataset.teammate + ":" + r.dataset.state).sort().join(" ");
	  return "pending[" + col("pending") + "] in_progress[" + col("in_progress") + "] completed[" + col("completed") + "] roster[" + mates + "]";
	})()`
	waitBoard := func(want, what string) {
		t.Helper()
		// A minute each, so that the board can still be read to say
		// what it showed instead.
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := pg.Eval(wctx, waitJS(board+` === `+jsString(want)), nil); err != nil {
			t.Fatalf("%s: the board is %q, want %q: %v", what, evalString(t, ctx, pg, board), want, err)
		}
	}
	waitBoard("pending[#3:-:waits 1] in_progress[#1:alice #2:bob] completed[] roster[alice:working bob:idle]", "claimed")

	// Beside the timeline; the roster has each teammate's type and task;
	// the attack is text, and ran nothing.
	var view struct {
		Beside, Pwned, Img bool
		Subject, Roster    string
		Blocks             string
	}
	if err := pg.Eval(ctx, `(() => {
	  const board = document.querySelector(".board"), tl = document.querySelector(".timeline");
	  const a = board.getBoundingClientRect(), b = tl.getBoundingClientRect();
	  return {
	    Beside: a.left >= b.right && a.top < b.bottom,
	    Pwned: window.__pwned !== undefined, Img: !!board.querySelector("img"),
	    Subject: board.querySelector('.tcard[data-task="2"] .subject').textContent,
	    Roster: board.querySelector(".roster").textContent,
	    Blocks: (board.querySelector('.tcard[data-task="1"] .blocks') || {}).textContent || "",
	  };
	})()`, &view); err != nil {
		t.Fatal(err)
	}
	if !view.Beside {
		t.Errorf("the board is not beside the timeline")
	}
	if view.Pwned || view.Img || view.Subject != boardSubject {
		t.Errorf("task #2's subject: %q (pwned %v, an img %v); want the attack as text", view.Subject, view.Pwned, view.Img)
	}
	for _, want := range []string{"alice", "general-purpose", "bob", "tester", "write the parser", "<img src=x"} {
		if !strings.Contains(view.Roster, want) {
			t.Errorf("the roster %q lacks %q", view.Roster, want)
		}
	}
	if view.Blocks != "blocks #3" {
		t.Errorf("task #1 says %q, want that it blocks #3", view.Blocks)
	}
	shot(t, ctx, pg, "web-team-board")

	// alice completes #1: the board follows the run's events, no reload.
	if err := pg.Eval(ctx, `window.__samePage = true`, nil); err != nil {
		t.Fatal(err)
	}
	release.set()
	waitBoard("pending[#3:-] in_progress[#2:bob] completed[#1:alice] roster[alice:idle bob:idle]", "after alice completed #1")
	if !evalBool(t, ctx, pg, `window.__samePage === true`) {
		t.Errorf("the page reloaded to show the change")
	}
	if evalBool(t, ctx, pg, `!!document.querySelector('.board .tcard[data-task="1"] .blocks')`) {
		t.Errorf("completed #1 still says it blocks #3")
	}
	shot(t, ctx, pg, "web-team-board-after")
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
