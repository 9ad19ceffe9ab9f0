package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
)

// Acceptance tests for agent teams (DESIGN S-A6, issue 26), driving the
// real binary against the fake Anthropic server. Every agent's next step
// is a function of its own conversation so far: the lead, two teammates
// and their wakes may interleave in any order and the run still converges.

// testerFile is a second agent type for teammates: its definition lists
// only Read and Grep, and as a teammate it gets the team's tools too.
const testerFile = `---
name: tester
description: Tests code. Use to check work.
tools: Read, Grep
model: inherit
---
TESTER-PROMPT: you test code and report what fails.
`

// teammateOf names the teammate a child request comes from ("" for none).
func teammateOf(c *bgCall) string {
	if !c.child() {
		return ""
	}
	for _, n := range []string{"alice", "bob", "carol"} {
		if c.has(`You are "` + n + `", a teammate`) {
			return n
		}
	}
	return ""
}

func taskCreate(subject string) testkit.ToolCall {
	return testkit.ToolCall{Name: "TaskCreate", Input: map[string]any{"subject": subject, "description": subject + ", carefully"}}
}

func taskUpdate(id string, kv ...any) testkit.ToolCall {
	in := map[string]any{"taskId": id}
	for i := 0; i+1 < len(kv); i += 2 {
		in[kv[i].(string)] = kv[i+1]
	}
	return testkit.ToolCall{Name: "TaskUpdate", Input: in}
}

func sendTo(to, message string) testkit.ToolCall {
	return testkit.ToolCall{Name: "SendMessage", Input: map[string]any{"to": to, "message": message, "summary": "a note for " + to}}
}

func teammate(name, agentType, prompt string) testkit.ToolCall {
	return testkit.ToolCall{Name: "Agent", Input: map[string]any{"description": name + " joins", "prompt": prompt, "subagent_type": agentType, "name": name}}
}

// setUpTeam is the lead's opening of the three-task team the team tests
// share: it creates "write the parser", second and "integrate both", makes
// #3 wait on #1, then adds alice (general-purpose) and bob (tester) with
// their prompts. ok is false once all of that is done.
func setUpTeam(c *bgCall, second, alice, bob string) (reply testkit.Reply, ok bool) {
	switch {
	case len(c.uses("TaskCreate")) == 0:
		return testkit.Reply{ToolCalls: []testkit.ToolCall{taskCreate("write the parser"), taskCreate(second), taskCreate("integrate both")}}, true
	case len(c.uses("TaskUpdate")) == 0:
		return testkit.Reply{ToolCalls: []testkit.ToolCall{taskUpdate("3", "addBlockedBy", []any{"1"})}}, true
	case len(c.uses("Agent")) == 0:
		return testkit.Reply{ToolCalls: []testkit.ToolCall{
			teammate("alice", "general-purpose", alice),
			teammate("bob", "tester", bob),
		}}, true
	}
	return testkit.Reply{}, false
}

// steps returns the first of script a teammate has not taken yet, by the
// tool calls in its conversation, or done.
func nextStep(c *bgCall, script []testkit.ToolCall, done testkit.Reply) testkit.Reply {
	taken := 0
	for _, m := range c.msgs {
		for _, b := range m.Blocks {
			if m.Role == "assistant" && b.Type == "tool_use" {
				taken++
			}
		}
	}
	if taken < len(script) {
		return testkit.Reply{ToolCalls: []testkit.ToolCall{script[taken]}}
	}
	return done
}

// userTexts are the user text blocks of a conversation holding s.
func userTexts(c *bgCall, s string) []string {
	var out []string
	for _, m := range c.msgs {
		for _, b := range m.Blocks {
			if m.Role == "user" && b.Type == "text" && strings.Contains(b.Text, s) {
				out = append(out, b.Text)
			}
		}
	}
	return out
}

var idleRE = regexp.MustCompile(`Teammate "(\w+)" is idle`)

// TestTeamWorksThroughASharedTaskList is issue 26's acceptance: a lead adds
// two teammates of different agent types and plans three tasks, one
// blocked by another; the teammates claim, message each other and the
// lead, and complete; the blocked task unblocks; the lead hears each
// completion once and each teammate going idle, answers, and sees owners
// and statuses in TaskList; -p exits when everybody is idle.
func TestTeamWorksThroughASharedTaskList(t *testing.T) {
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch teammateOf(c) {
		case "alice":
			return nextStep(c, []testkit.ToolCall{
				taskUpdate("1", "status", "in_progress"),
				taskUpdate("1", "status", "completed"),
				sendTo("bob", "ALICE-TO-BOB: the parser is in"),
				taskUpdate("3", "status", "in_progress"),
				taskUpdate("3", "status", "completed"),
				sendTo("main", "ALICE-TO-LEAD: integration is in"),
			}, testkit.Reply{Text: "ALICE-IDLE: parser and integration done"})
		case "bob":
			return nextStep(c, []testkit.ToolCall{
				taskUpdate("2", "status", "in_progress"),
				taskUpdate("2", "status", "completed"),
				sendTo("alice", "BOB-TO-ALICE: the printer is in"),
			}, testkit.Reply{Text: "BOB-IDLE: printer done"})
		case "":
			if c.child() {
				return testkit.Reply{Text: "TEST-HARNESS-ERROR: a child that is no teammate"}
			}
		default:
			return testkit.Reply{Text: "TEST-HARNESS-ERROR: an unknown teammate"}
		}
		// The lead.
		if r, ok := setUpTeam(c, "write the printer", "Take the parser, then the integration.", "Take the printer."); ok {
			return r
		}
		switch {
		case len(c.uses("TaskList")) == 0 && len(userTexts(c, "completed task #3")) > 0 && len(idleRE.FindAllString(strings.Join(c.notifications(), "\n"), -1)) >= 2:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "TaskList", Input: map[string]any{}}}}
		}
		return testkit.Reply{Text: fmt.Sprintf("LEAD-ACK %d", len(c.msgs))}
	}))
	e.write(".claude/agents/tester.md", testerFile)
	e.set("CADRE_AGENT_TEAMS=1")
	p := ok(t, e.run("", "-p", "build the pretty-printer with a team", "--model", sonnet, "--output-format", "stream-json"))

	mains, children := bgCalls(srv)
	last := mains[len(mains)-1]
	// The spawns' results: teammate_spawned, by name.
	spawned := last.results("Agent")
	if len(spawned) != 2 {
		t.Fatalf("%d Agent results, want 2:\n%s", len(spawned), last.dump())
	}
	for _, r := range spawned {
		if txt := r.resultText(); r.IsError || !strings.Contains(txt, "joined team \"default\"") || !strings.Contains(txt, "teammate_id: ") {
			t.Errorf("a teammate's spawn result: %s", txt)
		}
	}
	// The lead heard each completion once, and each teammate go idle.
	for _, id := range []string{"1", "2", "3"} {
		if n := len(userTexts(last, "completed task #"+id+":")); n != 1 {
			t.Errorf("the lead heard of task #%s's completion %d times, want once:\n%s", id, n, last.dump())
		}
	}
	if n := len(userTexts(last, "No longer blocked: #3")); n != 1 {
		t.Errorf("the lead heard %d times that #3 unblocked, want once", n)
	}
	idle := map[string]int{}
	for _, m := range idleRE.FindAllStringSubmatch(strings.Join(last.notifications(), "\n"), -1) {
		idle[m[1]]++
	}
	if idle["alice"] == 0 || idle["bob"] == 0 {
		t.Errorf("idle notices %v, want alice's and bob's:\n%s", idle, last.dump())
	}
	if ns := strings.Join(last.notifications(), "\n"); !strings.Contains(ns, "ALICE-IDLE") || !strings.Contains(ns, "BOB-IDLE") {
		t.Errorf("the idle notices lack the teammates' last messages:\n%s", ns)
	}
	if len(userTexts(last, "ALICE-TO-LEAD")) != 1 || !strings.Contains(userTexts(last, "ALICE-TO-LEAD")[0], `from="alice"`) {
		t.Errorf("alice's message to main did not reach the lead once, from alice:\n%s", last.dump())
	}
	// TaskList: owners and statuses, as Claude Code's tool shows them.
	lists := last.results("TaskList")
	if len(lists) != 1 {
		t.Fatalf("%d TaskList results, want 1:\n%s", len(lists), last.dump())
	}
	want := "#1 [completed] write the parser (alice)\n#2 [completed] write the printer (bob)\n#3 [completed] integrate both (alice)"
	if got := lists[0].resultText(); got != want {
		t.Errorf("TaskList:\n%s\nwant:\n%s", got, want)
	}
	// The lead answered after the list; -p ended on its answer.
	if res := finalResult(t, p.stdout); !strings.HasPrefix(fmt.Sprint(res["result"]), "LEAD-ACK") {
		t.Errorf("final result %v, want the lead's answer", res["result"])
	}

	// The teammates: messages reached each other by name; their tools
	// are their definition's plus the team's, and no Agent.
	var sawAlice, sawBob bool
	for _, c := range children {
		switch teammateOf(c) {
		case "alice":
			sawAlice = sawAlice || c.has("BOB-TO-ALICE")
			if got := toolNames(c.req); slices.Contains(got, "Agent") || !slices.Contains(got, "ListAgents") || !slices.Contains(got, "TaskUpdate") || !slices.Contains(got, "SendMessage") {
				t.Errorf("alice's tools %v: want the team's and no Agent", got)
			}
		case "bob":
			sawBob = sawBob || c.has("ALICE-TO-BOB")
			if got, want := toolNames(c.req), []string{"Grep", "ListAgents", "Read", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskUpdate"}; !slices.Equal(got, want) {
				t.Errorf("bob's (tester's) tools %v, want %v", got, want)
			}
		}
	}
	if !sawAlice || !sawBob {
		t.Errorf("messages between teammates: alice got bob's %v, bob got alice's %v", sawAlice, sawBob)
	}
	// The lead's own tools: the team's TaskList (no status_filter), no
	// background TaskList.
	if got := toolNames(mains[0].req); !slices.Contains(got, "TaskCreate") || !slices.Contains(got, "ListAgents") {
		t.Errorf("the lead's tools %v lack the team's", got)
	}
	if strings.Contains(string(mains[0].req.Body), "status_filter") {
		t.Errorf("the lead was offered the background TaskList (status_filter) beside the team's")
	}
	// stream-json says what happened to the list: the lead's three
	// creates (a teammate's changes carry its spawn's parent_tool_use_id
	// and show with --verbose, as its other lines do).
	var created []string
	for _, l := range lines(t, p.stdout) {
		if l["subtype"] != "team_task_changed" {
			continue
		}
		task, _ := l["task"].(map[string]any)
		if l["by"] == "main" && l["change"] == "created" && l["team"] != "" && task != nil {
			created = append(created, fmt.Sprint(task["id"]))
		}
		if l["parent_tool_use_id"] != nil {
			t.Errorf("a teammate's team_task_changed line without --verbose: %v", l)
		}
	}
	if !slices.Equal(created, []string{"1", "2", "3"}) {
		t.Errorf("team_task_changed lines of the lead's creates: %v, want tasks 1, 2, 3", created)
	}
	// What users see, from another process: cadre tasks names each
	// teammate; cadre tasks team has the roster, then the task list.
	records := ok(t, e.run("", "tasks")).stdout
	for _, want := range []string{"general-purpose (alice)", "tester (bob)"} {
		if !strings.Contains(records, want) {
			t.Errorf("cadre tasks lacks %q:\n%s", want, records)
		}
	}
	list := ok(t, e.run("", "tasks", "team", sessionID(t, p)))
	// The run has ended: its teammates are idle or, stopped with it, ended.
	for _, row := range []string{`(?m)^TEAMMATE\s+TYPE\s+STATE`, `(?m)^alice\s+general-purpose\s+(idle|ended)\s*$`, `(?m)^bob\s+tester\s+(idle|ended)\s*$`} {
		if !regexp.MustCompile(row).MatchString(list.stdout) {
			t.Errorf("cadre tasks team's roster lacks %s:\n%s", row, list.stdout)
		}
	}
	for _, row := range []string{"#1  completed  alice  write the parser", "#2  completed  bob    write the printer", "#3  completed  alice  integrate both"} {
		if !strings.Contains(list.stdout, row) {
			t.Errorf("cadre tasks team lacks %q:\n%s", row, list.stdout)
		}
	}
	var team []map[string]any
	if err := json.Unmarshal([]byte(ok(t, e.run("", "tasks", "team", sessionID(t, p), "--json")).stdout), &team); err != nil || len(team) != 3 {
		t.Fatalf("cadre tasks team --json: %v, %v", team, err)
	}
	if by, _ := team[2]["blocked_by"].([]any); len(by) == 0 || team[2]["owner"] != "alice" || team[2]["status"] != "completed" {
		t.Errorf("task #3 as JSON: %v", team[2])
	}
}

// TestTeamsOffChangesNothing: without the gate an Agent call with a name
// starts a plain subagent, and the lead has no team tools.
func TestTeamsOffChangesNothing(t *testing.T) {
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch {
		case c.child():
			return testkit.Reply{Text: "PLAIN-CHILD"}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{teammate("alice", "general-purpose", "Do it.")}}
		}
		return testkit.Reply{Text: "done"}
	}))
	ok(t, e.run("", "-p", "go", "--model", sonnet))
	mains, _ := bgCalls(srv)
	if got := toolNames(mains[0].req); slices.Contains(got, "TaskCreate") || slices.Contains(got, "ListAgents") {
		t.Errorf("teams off: the lead has team tools %v", got)
	}
	last := mains[len(mains)-1]
	if r := last.results("Agent"); len(r) != 1 || !strings.Contains(r[0].resultText(), "PLAIN-CHILD") {
		t.Errorf("teams off: the named Agent call did not run a plain subagent:\n%s", last.dump())
	}
}

var teammateIDRE = regexp.MustCompile(`teammate_id: ([a-z0-9][a-z0-9_-]*)`)

// TestTeamHooksMayRefuse: TaskCreated refuses a create (the item is taken
// back out), TaskCompleted refuses a completion (the tool result says
// why) and TeammateIdle keeps a teammate working, its reason the
// teammate's next prompt; all three get Claude Code's team fields.
func TestTeamHooksMayRefuse(t *testing.T) {
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		if teammateOf(c) == "carol" {
			return nextStep(c, []testkit.ToolCall{
				taskUpdate("2", "status", "in_progress"),
				taskUpdate("2", "status", "completed"),
				taskUpdate("2", "status", "completed"),
			}, testkit.Reply{Text: "CAROL-IDLE"})
		}
		if c.child() {
			return testkit.Reply{Text: "TEST-HARNESS-ERROR: an unknown child"}
		}
		switch {
		case len(c.uses("TaskCreate")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{taskCreate("FORBIDDEN thing")}}
		case len(c.uses("TaskCreate")) == 1:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{taskCreate("real work")}}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{teammate("carol", "general-purpose", "Do the real work.")}}
		}
		return testkit.Reply{Text: "LEAD-ACK"}
	}))
	e.writeHome("settings.json", hookSettings(t, map[string]any{
		"TaskCreated":   commandHook("", `in=$(cat); case "$in" in *FORBIDDEN*) echo "no forbidden tasks here" >&2; exit 2;; esac; printf '%s\n' "$in" >> created.jsonl`),
		"TaskCompleted": commandHook("", `in=$(cat); printf '%s\n' "$in" >> completed.jsonl; if [ ! -e tests_ran ]; then touch tests_ran; echo "run the tests first" >&2; exit 2; fi`),
		"TeammateIdle":  commandHook("", `in=$(cat); printf '%s\n' "$in" >> idle.jsonl; if [ ! -e idle_once ]; then touch idle_once; echo "KEEP-GOING: check the list once more" >&2; exit 2; fi`),
	}))
	e.set("CADRE_AGENT_TEAMS=1")
	ok(t, e.run("", "-p", "work as a team", "--model", sonnet))

	mains, children := bgCalls(srv)
	last := mains[len(mains)-1]
	creates := last.results("TaskCreate")
	if len(creates) != 2 || !creates[0].IsError || !strings.Contains(creates[0].resultText(), "no forbidden tasks here") || creates[1].IsError || !strings.Contains(creates[1].resultText(), "#2") {
		t.Errorf("TaskCreate results: the hook's refusal, then #2:\n%s", last.dump())
	}
	var carol *bgCall
	for _, c := range children {
		if teammateOf(c) == "carol" {
			carol = c
		}
	}
	if carol == nil {
		t.Fatal("carol never ran")
	}
	ups := carol.results("TaskUpdate")
	if len(ups) != 3 || ups[0].IsError || !ups[1].IsError || !strings.Contains(ups[1].resultText(), "run the tests first") || ups[2].IsError {
		t.Errorf("carol's TaskUpdates: claim, refused completion, completion:\n%s", carol.dump())
	}
	if len(userTexts(carol, "KEEP-GOING: check the list once more")) != 1 {
		t.Errorf("the TeammateIdle hook's reason is not carol's next prompt:\n%s", carol.dump())
	}
	// One idle notice: the first idle was held back by the hook.
	if n := len(idleRE.FindAllString(strings.Join(last.notifications(), "\n"), -1)); n != 1 {
		t.Errorf("%d idle notices, want 1:\n%s", n, last.dump())
	}
	for file, want := range map[string][]string{
		"created.jsonl":   {`"hook_event_name":"TaskCreated"`, `"task_id":"2"`, `"task_subject":"real work"`, `"teammate_name":"main"`, `"team_name":"default"`},
		"completed.jsonl": {`"hook_event_name":"TaskCompleted"`, `"task_id":"2"`, `"teammate_name":"carol"`, `"team_name":"default"`},
		"idle.jsonl":      {`"hook_event_name":"TeammateIdle"`, `"teammate_name":"carol"`, `"team_name":"default"`},
	} {
		b, err := os.ReadFile(filepath.Join(e.dir, file))
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		for _, w := range want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s lacks %s:\n%s", file, w, b)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(e.dir, "idle.jsonl")); strings.Count(string(b), "\n") != 2 {
		t.Errorf("TeammateIdle ran %d times, want 2 (blocked once, then idle):\n%s", strings.Count(string(b), "\n"), b)
	}
}

// TestTeamMessagesAndRoster: "*" reaches every teammate but the sender,
// names resolve within the team only, ListAgents shows whom each can
// message, and TaskStop stops a teammate, whose roster row says so.
func TestTeamMessagesAndRoster(t *testing.T) {
	broadcast := newBGFlag() // alice has broadcast
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch teammateOf(c) {
		case "alice":
			if len(c.results("SendMessage")) > 0 {
				broadcast.set()
			}
			return nextStep(c, []testkit.ToolCall{
				{Name: "ListAgents", Input: map[string]any{}},
				sendTo("*", "BROADCAST-FROM-ALICE"),
				sendTo("nobody", "lost"),
			}, testkit.Reply{Text: "ALICE-IDLE"})
		case "bob":
			return testkit.Reply{Text: "BOB-IDLE"}
		case "carol":
			if c.has("BROADCAST-FROM-ALICE") {
				// Busy until stopped: the lead stops it after the others idle.
				return testkit.Reply{Text: "CAROL-NEVER", Wait: heldForever()}
			}
			// Running while alice broadcasts: the message waits for her
			// next step.
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "ListAgents", Input: map[string]any{}}}, Wait: broadcast.ch}
		}
		if c.child() {
			return testkit.Reply{Text: "TEST-HARNESS-ERROR: an unknown child"}
		}
		ns := strings.Join(c.notifications(), "\n")
		switch {
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				teammate("bob", "general-purpose", "Wait for news."),
				teammate("carol", "general-purpose", "Work long."),
			}}
		case len(c.uses("Agent")) == 2:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{teammate("alice", "general-purpose", "Tell everyone.")}}
		case len(c.uses("TaskStop")) == 0 && strings.Contains(ns, `Teammate "alice" is idle`) && strings.Count(ns, `Teammate "bob" is idle`) >= 2:
			var carolID string
			for _, r := range c.results("Agent") {
				if strings.Contains(r.resultText(), `"carol"`) {
					carolID = teammateIDRE.FindStringSubmatch(r.resultText())[1]
				}
			}
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "TaskStop", Input: map[string]any{"task_id": carolID}}}}
		case len(c.uses("TaskStop")) == 1 && len(c.uses("ListAgents")) == 0 && strings.Contains(ns, `Teammate "carol" stopped`):
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "ListAgents", Input: map[string]any{}}}}
		}
		return testkit.Reply{Text: "LEAD-ACK"}
	}))
	e.set("CADRE_AGENT_TEAMS=1")
	ok(t, e.run("", "-p", "talk as a team", "--model", sonnet))

	mains, children := bgCalls(srv)
	last := mains[len(mains)-1]
	var alice, bob *bgCall
	carolHeard := false
	for _, c := range children {
		switch teammateOf(c) {
		case "alice":
			alice = c
		case "bob":
			bob = c
		case "carol":
			carolHeard = carolHeard || c.has("BROADCAST-FROM-ALICE")
		}
	}
	if alice == nil || bob == nil {
		t.Fatal("alice or bob never ran")
	}
	if !bob.has("BROADCAST-FROM-ALICE") || !strings.Contains(strings.Join(userTexts(bob, "BROADCAST-FROM-ALICE"), ""), `from="alice"`) {
		t.Errorf("bob did not get alice's broadcast, from alice:\n%s", bob.dump())
	}
	if !carolHeard {
		t.Errorf("carol, running, did not get alice's broadcast at her next step")
	}
	if len(userTexts(alice, "BROADCAST-FROM-ALICE")) != 0 {
		t.Errorf("the broadcast reached its sender:\n%s", alice.dump())
	}
	la := alice.results("ListAgents")
	if len(la) != 1 {
		t.Fatalf("alice's ListAgents: %d results", len(la))
	}
	roster := la[0].resultText()
	for _, w := range []string{"- main: lead", "- bob (general-purpose): ", "- carol (general-purpose): running"} {
		if !strings.Contains(roster, w) {
			t.Errorf("alice's ListAgents lacks %q:\n%s", w, roster)
		}
	}
	if strings.Contains(roster, "- alice") {
		t.Errorf("alice's ListAgents lists alice:\n%s", roster)
	}
	if r := alice.results("SendMessage"); len(r) != 2 || !strings.Contains(r[0].resultText(), "broadcast to 2 teammate(s)") || !r[1].IsError || !strings.Contains(r[1].resultText(), `has no teammate "nobody"`) {
		t.Errorf("alice's SendMessage results:\n%s", alice.dump())
	}
	lead := last.results("ListAgents")
	if len(lead) != 1 {
		t.Fatalf("the lead's ListAgents: %d results:\n%s", len(lead), last.dump())
	}
	for _, w := range []string{"- alice (general-purpose): idle", "- bob (general-purpose): idle", "- carol (general-purpose): stopped"} {
		if !strings.Contains(lead[0].resultText(), w) {
			t.Errorf("the lead's ListAgents lacks %q:\n%s", w, lead[0].resultText())
		}
	}
	if strings.Contains(lead[0].resultText(), "- main") {
		t.Errorf("the lead's ListAgents lists the lead:\n%s", lead[0].resultText())
	}
}

// TestTeamsGate: subagents.teams in settings, CADRE_AGENT_TEAMS=1 and
// Claude Code's CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1 each turn teams on.
func TestTeamsGate(t *testing.T) {
	for _, tc := range []struct {
		name, env, settings string
	}{
		{"settings", "", `{"subagents": {"teams": true}}`},
		{"cadre env", "CADRE_AGENT_TEAMS=1", ""},
		{"claude code env", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply { return testkit.Reply{Text: "hi"} }))
			if tc.env != "" {
				e.set(tc.env)
			}
			if tc.settings != "" {
				e.writeHome("settings.json", tc.settings)
			}
			ok(t, e.run("", "-p", "hello", "--model", sonnet))
			mains, _ := bgCalls(srv)
			if got := toolNames(mains[0].req); !slices.Contains(got, "TaskCreate") || !slices.Contains(got, "ListAgents") {
				t.Errorf("the lead's tools %v lack the team's", got)
			}
		})
	}
}

// TestTeamClaimRaceOnPostgres: two teammates claim one task at the same
// moment with the team's list in PostgreSQL: exactly one owns it, and
// the other's TaskUpdate says it cannot.
func TestTeamClaimRaceOnPostgres(t *testing.T) {
	arrived := map[string]*bgFlag{"alice": newBGFlag(), "bob": newBGFlag()}
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
		switch name := teammateOf(c); name {
		case "alice", "bob":
			if len(c.uses("TaskUpdate")) > 0 {
				return testkit.Reply{Text: strings.ToUpper(name) + "-IDLE"}
			}
			// Both claim only once both are here.
			arrived[name].set()
			other := map[string]string{"alice": "bob", "bob": "alice"}[name]
			if !arrived[other].wait() {
				return testkit.Reply{Text: "TEST-HARNESS-ERROR: the other teammate never came"}
			}
			return testkit.Reply{ToolCalls: []testkit.ToolCall{taskUpdate("1", "status", "in_progress")}}
		}
		if c.child() {
			return testkit.Reply{Text: "TEST-HARNESS-ERROR: an unknown child"}
		}
		switch {
		case len(c.uses("TaskCreate")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{taskCreate("the one task")}}
		case len(c.uses("Agent")) == 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{
				teammate("alice", "general-purpose", "Claim task 1."),
				teammate("bob", "general-purpose", "Claim task 1."),
			}}
		case len(c.uses("TaskList")) == 0 && strings.Count(strings.Join(c.notifications(), ""), " is idle") >= 2:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "TaskList", Input: map[string]any{}}}}
		}
		return testkit.Reply{Text: "LEAD-ACK"}
	}))
	e.set("CADRE_STORE_URL="+pg.URL(t), "CADRE_AGENT_TEAMS=1")
	ok(t, e.run("", "-p", "race for it", "--model", sonnet))

	mains, children := bgCalls(srv)
	won := map[string]bool{}
	for _, c := range children {
		if name := teammateOf(c); name != "" {
			for _, r := range c.results("TaskUpdate") {
				won[name] = !r.IsError && strings.Contains(r.resultText(), "It is yours")
			}
		}
	}
	if len(won) != 2 || won["alice"] == won["bob"] {
		t.Fatalf("claims: %v, want exactly one of alice and bob to win", won)
	}
	owner := "alice"
	if won["bob"] {
		owner = "bob"
	}
	last := mains[len(mains)-1]
	if l := last.results("TaskList"); len(l) != 1 || l[0].resultText() != "#1 [in_progress] the one task ("+owner+")" {
		t.Errorf("TaskList after the race, want %s the owner:\n%s", owner, last.dump())
	}
}

// TestCoordinatorMode: the main agent's request offers only the
// orchestration tools and says how to coordinate; an Agent call runs in
// the background without run_in_background, on the agent's own model
// whatever the call names; the coordinator answers the notification.
// --coordinator, CADRE_COORDINATOR_MODE=1 and subagents.coordinator each
// turn it on.
func TestCoordinatorMode(t *testing.T) {
	for _, tc := range []struct {
		name, env, settings string
		args                []string
	}{
		{"flag", "", "", []string{"--coordinator"}},
		{"env", "CADRE_COORDINATOR_MODE=1", "", nil},
		{"settings", "", `{"subagents": {"coordinator": true, "fork": true}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply {
				switch {
				case c.child():
					return testkit.Reply{Text: "WORKER-RESULT"}
				case len(c.notifications()) > 0:
					return testkit.Reply{Text: "COORDINATOR-ANSWER"}
				case len(c.uses("Agent")) == 0:
					return testkit.Reply{ToolCalls: []testkit.ToolCall{{Name: "Agent", Input: map[string]any{"description": "do the work", "prompt": "WORKER-TASK", "model": "opus"}}}}
				}
				return testkit.Reply{Text: "Started a worker; waiting."}
			}))
			if tc.env != "" {
				e.set(tc.env)
			}
			if tc.settings != "" {
				e.writeHome("settings.json", tc.settings)
			}
			p := ok(t, e.run("", append([]string{"-p", "coordinate this", "--model", sonnet, "--output-format", "stream-json"}, tc.args...)...))
			mains, children := bgCalls(srv)
			want := []string{"Agent", "ListAgents", "SendMessage", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate"}
			if got := toolNames(mains[0].req); !slices.Equal(got, want) {
				t.Errorf("the coordinator's tools %v, want %v", got, want)
			}
			if !strings.Contains(mains[0].system, "You are the coordinator of a team of agents") {
				t.Errorf("the coordinator's system prompt lacks its instructions")
			}
			last := mains[len(mains)-1]
			if r := last.results("Agent"); len(r) != 1 || !strings.Contains(r[0].resultText(), "agentId: ") || strings.Contains(r[0].resultText(), "WORKER-RESULT") {
				t.Errorf("the Agent call did not start in the background:\n%s", last.dump())
			}
			if len(children) != 1 || !children[0].has("WORKER-TASK") {
				t.Fatalf("%d worker requests", len(children))
			}
			if isFork(children[0].req) {
				t.Error("the worker is a fork: forks are off in coordinator mode")
			}
			if m, _ := children[0].req.JSON()["model"].(string); m != sonnet {
				t.Errorf("the worker ran on %q; a coordinator's call cannot pick the model (want the agent's own, %s)", m, sonnet)
			}
			if res := finalResult(t, p.stdout); res["result"] != "COORDINATOR-ANSWER" {
				t.Errorf("final result %v", res["result"])
			}
		})
	}
}

// TestCoordinatorModeNeedsTheClaudeProfile: under another surface profile
// coordinator mode is off, with a warning, rather than leaving the main
// agent nothing to orchestrate with.
func TestCoordinatorModeNeedsTheClaudeProfile(t *testing.T) {
	e, srv := anthropicEnv(t, bgHandle(func(c *bgCall) testkit.Reply { return testkit.Reply{Text: "hi"} }))
	e.writeHome("settings.json", `{"subagents": {"surface": "opencode"}}`)
	p := ok(t, e.run("", "-p", "hello", "--model", sonnet, "--coordinator"))
	if !strings.Contains(p.stderr, `coordinator mode needs subagents.surface "claude", not "opencode": it is off`) {
		t.Errorf("no warning on stderr:\n%s", p.stderr)
	}
	mains, _ := bgCalls(srv)
	if got := toolNames(mains[0].req); !slices.Contains(got, "task") || !slices.Contains(got, "Read") {
		t.Errorf("the main agent's tools %v: want opencode's task and the built-ins", got)
	}
}
