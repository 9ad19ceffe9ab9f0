package permission

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// taskRules decodes a JSON task rule object, failing the test on error.
func taskRules(t *testing.T, s string) TaskRules {
	t.Helper()
	if s == "" {
		return nil
	}
	var rs TaskRules
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		t.Fatalf("unmarshal %s: %v", s, err)
	}
	return rs
}

func TestWildcardMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "reviewer", true},
		{"*", "", true},
		{"*", "team/reviewer", false},
		{"**", "team/reviewer", true},
		{"team/*", "team/reviewer", true},
		{"team/*", "team/a/reviewer", false},
		{"team/**", "team/a/reviewer", true},
		{"**/reviewer", "team/a/reviewer", true},
		{"review-*", "review-code", true},
		{"review-*", "review-", true},
		{"review-*", "reviewer", false},
		{"*-review", "code-review", true},
		{"agent-?", "agent-1", true},
		{"agent-?", "agent-12", false},
		{"agent-?", "agent-", false},
		{"agent-?", "agent-é", true}, // one character, not one byte
		{"a?c", "a/c", true},
		{"a.c", "abc", false}, // regexp metacharacters are literal
		{"a.c", "a.c", true},
		{"a+(b)", "a+(b)", true},
		{"[x]", "x", false},
		{"Reviewer", "reviewer", false}, // case matters here; Evaluate folds it
		{"reviewer", "reviewer2", false},
		{"", "", true},
	} {
		if got := WildcardMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("WildcardMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules string
		agent string
		want  Action
		rule  string // the deciding rule's pattern; "" = no match
	}{
		{"no rules", ``, "reviewer", ActionAllow, ""},
		{"deny named", `{"reviewer": "deny"}`, "reviewer", ActionDeny, "reviewer"},
		{"deny named other", `{"reviewer": "deny"}`, "explore", ActionAllow, ""},
		{"allow after deny", `{"*": "deny", "reviewer": "allow"}`, "reviewer", ActionAllow, "reviewer"},
		{"allow after deny other", `{"*": "deny", "reviewer": "allow"}`, "explore", ActionDeny, "*"},
		{"deny after allow", `{"reviewer": "allow", "*": "deny"}`, "reviewer", ActionDeny, "*"},
		{"family", `{"review-*": "deny"}`, "review-code", ActionDeny, "review-*"},
		{"family not reviewer", `{"review-*": "deny"}`, "reviewer", ActionAllow, ""},
		{"star stops at slash", `{"team/*": "deny"}`, "team/a/b", ActionAllow, ""},
		{"double star", `{"team/**": "deny"}`, "team/a/b", ActionDeny, "team/**"},
		{"question mark", `{"agent-?": "ask"}`, "agent-7", ActionAsk, "agent-?"},
		{"question mark one only", `{"agent-?": "ask"}`, "agent-77", ActionAllow, ""},
		{"case folded", `{"Reviewer": "deny"}`, "reviewer", ActionDeny, "Reviewer"},
		{"case folded name", `{"reviewer": "deny"}`, "REVIEWER", ActionDeny, "reviewer"},
		{"explicit allow", `{"*": "allow"}`, "x", ActionAllow, "*"},
		{"last of duplicates", `{"x": "deny", "x": "ask"}`, "x", ActionAsk, "x"},
		{"bare string", `"deny"`, "anyone", ActionDeny, "*"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, rule := taskRules(t, tc.rules).Evaluate(tc.agent)
			if got != tc.want {
				t.Errorf("action %q, want %q", got, tc.want)
			}
			switch {
			case tc.rule == "" && rule != nil:
				t.Errorf("rule %v, want no match", *rule)
			case tc.rule != "" && (rule == nil || rule.Pattern != tc.rule):
				t.Errorf("rule %v, want pattern %q", rule, tc.rule)
			}
		})
	}
}

func TestRemovesTool(t *testing.T) {
	for _, tc := range []struct {
		rules string
		want  bool
	}{
		{``, false},
		{`{}`, false},
		{`{"*": "deny"}`, true},
		{`"deny"`, true},
		{`{"x": "allow", "*": "deny"}`, true},
		{`{"*": "deny", "x": "allow"}`, false},
		{`{"*": "deny", "x": "deny"}`, false}, // last rule is not "*"
		{`{"*": "ask"}`, false},
		{`{"**": "deny"}`, false}, // only the literal "*" removes, as in OpenCode
	} {
		if got := taskRules(t, tc.rules).RemovesTool(); got != tc.want {
			t.Errorf("%s: RemovesTool = %v, want %v", tc.rules, got, tc.want)
		}
	}
}

func TestTaskRulesJSON(t *testing.T) {
	// Keys in an order no sort would produce: the order must survive.
	in := `{"zeta": "deny", "*": "ASK", "alpha": "allow", "m-*": "deny"}`
	got := taskRules(t, in)
	want := TaskRules{{"zeta", ActionDeny}, {"*", ActionAsk}, {"alpha", ActionAllow}, {"m-*", ActionDeny}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("unmarshal (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"zeta":"deny","*":"ask","alpha":"allow","m-*":"deny"}` {
		t.Errorf("marshal = %s", out)
	}
	// Inside a struct, and back.
	var s struct {
		Task TaskRules `json:"task"`
	}
	if err := json.Unmarshal([]byte(`{"task": `+string(out)+`}`), &s); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, s.Task); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if out, _ := json.Marshal(TaskRules(nil)); string(out) != `{}` {
		t.Errorf("empty marshals as %s", out)
	}

	// null leaves the rules as they are.
	keep := TaskRules{{"x", ActionDeny}}
	if err := json.Unmarshal([]byte(`null`), &keep); err != nil || len(keep) != 1 {
		t.Errorf("null: %v, %v", keep, err)
	}
}

func TestTaskRulesJSONErrors(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string
		pattern string // the key a *TaskRuleError names; "-" = not one
	}{
		{`{"reviewer": "nope"}`, `task rule "reviewer": want "allow", "ask" or "deny", got "nope"`, "reviewer"},
		{`{"a": "deny", "b": true}`, `task rule "b": want "allow", "ask" or "deny", got a boolean`, "b"},
		{`{"b": {"x": "deny"}}`, `task rule "b": want "allow", "ask" or "deny", got an object`, "b"},
		{`{"b": null}`, `task rule "b": want "allow", "ask" or "deny", got null`, "b"},
		{`{"": "deny"}`, `task rule "": empty agent pattern: use "*" for every agent`, ""},
		{`{"x": "deny"`, `task rules: unexpected EOF`, "-"},
		{`"maybe"`, `task rules: want "allow", "ask" or "deny", got "maybe"`, "-"},
		{`["deny"]`, `task rules: want an object of agent pattern to "allow", "ask" or "deny" (or one action for every agent), got an array`, "-"},
		{`3`, `task rules: want an object of agent pattern to "allow", "ask" or "deny" (or one action for every agent), got a number`, "-"},
	} {
		var rs TaskRules
		err := rs.UnmarshalJSON([]byte(tc.in)) // directly: json.Unmarshal would catch bad syntax first
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v\nwant %s", tc.in, err, tc.want)
			continue
		}
		var tre *TaskRuleError
		if isTRE := errors.As(err, &tre); isTRE != (tc.pattern != "-") || isTRE && tre.Pattern != tc.pattern {
			t.Errorf("%s: TaskRuleError %v, want pattern %q", tc.in, tre, tc.pattern)
		}
	}
}

func TestParseTaskRules(t *testing.T) {
	got, err := ParseTaskRules([][2]string{{"*", "deny"}, {"reviewer", "Allow"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(TaskRules{{"*", ActionDeny}, {"reviewer", ActionAllow}}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_, err = ParseTaskRules([][2]string{{"*", "deny"}, {"reviewer", "yes"}})
	var tre *TaskRuleError
	if !errors.As(err, &tre) || tre.Pattern != "reviewer" {
		t.Errorf("bad action: %v, want a TaskRuleError for reviewer", err)
	}
}

func TestPermitSpawn(t *testing.T) {
	const (
		denied   = `Permission to use Agent denied `
		noRetry  = `: the agent "reviewer" may not be spawned in this session; do not retry this call`
		headless = `Permission to use Agent denied: spawning the agent "reviewer" requires approval (the rule %s asks before spawning "reviewer") ` +
			`and nobody can approve it in this non-interactive session; do not retry it, and tell the user, who can change that rule`
	)
	for _, tc := range []struct {
		name             string
		task, extra      string // JSON task rules
		allow, ask, deny string // Claude Code rule lists
		mode             Mode
		asker            *asker // nil: headless
		agent            string // "" = reviewer
		want             string // "" = allowed, else the error text
		asked            string // the Question's Reason, if the asker must be asked
	}{
		{name: "no rules", want: ""},
		{name: "task deny", task: `{"reviewer": "deny"}`,
			want: denied + `(permissions.task "reviewer": "deny")` + noRetry},
		{name: "task deny other agent", task: `{"reviewer": "deny"}`, agent: "explore"},
		{name: "task deny all", task: `{"*": "deny"}`,
			want: denied + `(permissions.task "*": "deny")` + noRetry},
		{name: "allow after deny", task: `{"*": "deny", "reviewer": "allow"}`},
		{name: "allow after deny, other denied", task: `{"*": "deny", "reviewer": "allow"}`, agent: "explore",
			want: `Permission to use Agent denied (permissions.task "*": "deny"): the agent "explore" may not be spawned in this session; do not retry this call`},
		{name: "deny after allow", task: `{"reviewer": "allow", "*": "deny"}`,
			want: denied + `(permissions.task "*": "deny")` + noRetry},
		{name: "family", task: `{"review-*": "deny"}`, agent: "review-code",
			want: `Permission to use Agent denied (permissions.task "review-*": "deny"): the agent "review-code" may not be spawned in this session; do not retry this call`},
		{name: "family spares reviewer", task: `{"review-*": "deny"}`},
		{name: "definition rule", extra: `{"reviewer": "deny"}`,
			want: denied + `(the calling agent's permission.task "reviewer": "deny")` + noRetry},
		// An agent file narrows what the user's settings allow, and never
		// widens them: a settings deny or ask holds whatever the calling
		// agent's own rules say (issue 8, item 7).
		{name: "definition allow cannot undo a settings deny all", task: `{"*": "deny"}`, extra: `{"reviewer": "allow"}`,
			want: denied + `(permissions.task "*": "deny")` + noRetry},
		{name: "definition allow all cannot undo a named settings deny", task: `{"reviewer": "deny"}`, extra: `{"*": "allow"}`,
			want: denied + `(permissions.task "reviewer": "deny")` + noRetry},
		{name: "definition allow cannot turn a settings ask into allow", task: `{"reviewer": "ask"}`, extra: `{"reviewer": "allow"}`,
			want: strings.Replace(headless, "%s", `"reviewer": "ask" (permissions.task)`, 1)},
		{name: "definition allow leaves a settings ask to the asker", task: `{"*": "ask"}`, extra: `{"*": "allow"}`, asker: &asker{ok: true},
			asked: `the rule "*": "ask" (permissions.task) asks before spawning "reviewer"`},
		{name: "definition deny after settings allow", task: `{"reviewer": "allow"}`, extra: `{"*": "deny"}`,
			want: denied + `(the calling agent's permission.task "*": "deny")` + noRetry},
		{name: "definition ask narrows a settings allow", task: `{"*": "allow"}`, extra: `{"reviewer": "ask"}`,
			want: strings.Replace(headless, "%s", `"reviewer": "ask" (the calling agent's permission.task)`, 1)},
		{name: "definition deny beats a settings ask", task: `{"reviewer": "ask"}`, extra: `{"reviewer": "deny"}`,
			want: denied + `(the calling agent's permission.task "reviewer": "deny")` + noRetry},
		{name: "definition allow with no settings rule", extra: `{"reviewer": "allow"}`},

		{name: "Agent(name) deny", deny: "Agent(reviewer)",
			want: denied + `by rule "Agent(reviewer)" (permissions.deny)` + noRetry},
		{name: "Task(name) deny", deny: "Task(reviewer)",
			want: denied + `by rule "Task(reviewer)" (permissions.deny)` + noRetry},
		{name: "Agent(name) ignores case", deny: "Agent(Reviewer)",
			want: denied + `by rule "Agent(Reviewer)" (permissions.deny)` + noRetry},
		{name: "Agent(name) is exact", deny: "Agent(review)"},
		{name: "Agent(name) other agent", deny: "Agent(explore)"},
		{name: "Agent(family) deny", deny: "Agent(review-*)", agent: "review-code",
			want: `Permission to use Agent denied by rule "Agent(review-*)" (permissions.deny): the agent "review-code" may not be spawned in this session; do not retry this call`},
		{name: "Agent(family) spares reviewer", deny: "Agent(review-*)"},
		{name: "bare Agent deny", deny: "Agent",
			want: denied + `by rule "Agent" (permissions.deny)` + noRetry},
		{name: "Agent deny beats task allow", deny: "Agent(reviewer)", task: `{"reviewer": "allow"}`,
			want: denied + `by rule "Agent(reviewer)" (permissions.deny)` + noRetry},
		{name: "task deny beats Agent allow", allow: "Agent(reviewer)", task: `{"reviewer": "deny"}`,
			want: denied + `(permissions.task "reviewer": "deny")` + noRetry},
		{name: "deny holds in bypass", deny: "Agent(reviewer)", mode: ModeBypass,
			want: denied + `by rule "Agent(reviewer)" (permissions.deny)` + noRetry},
		{name: "task deny holds in bypass", task: `{"reviewer": "deny"}`, mode: ModeBypass,
			want: denied + `(permissions.task "reviewer": "deny")` + noRetry},
		{name: "plan mode may spawn", mode: ModePlan},

		{name: "task ask headless", task: `{"reviewer": "ask"}`,
			want: strings.Replace(headless, "%s", `"reviewer": "ask" (permissions.task)`, 1)},
		{name: "task ask approved", task: `{"reviewer": "ask"}`, asker: &asker{ok: true},
			asked: `the rule "reviewer": "ask" (permissions.task) asks before spawning "reviewer"`},
		{name: "task ask refused", task: `{"reviewer": "ask"}`, asker: &asker{},
			asked: `the rule "reviewer": "ask" (permissions.task) asks before spawning "reviewer"`,
			want:  `Permission to use Agent denied: the user refused to let the agent "reviewer" be spawned; do not retry it, ask the user how to proceed if unsure`},
		{name: "task ask bypassed", task: `{"reviewer": "ask"}`, mode: ModeBypass, asker: &asker{}},
		{name: "Agent ask headless", ask: "Agent(reviewer)",
			want: strings.Replace(headless, "%s", `"Agent(reviewer)" (permissions.ask)`, 1)},
		{name: "Agent ask approved", ask: "Agent(reviewer)", asker: &asker{ok: true},
			asked: `the rule "Agent(reviewer)" (permissions.ask) asks before spawning "reviewer"`},
		{name: "Agent ask beats task allow", ask: "Agent(reviewer)", task: `{"reviewer": "allow"}`, asker: &asker{ok: true},
			asked: `the rule "Agent(reviewer)" (permissions.ask) asks before spawning "reviewer"`},
		{name: "task ask beats Agent allow", allow: "Agent(reviewer)", task: `{"reviewer": "ask"}`, asker: &asker{ok: true},
			asked: `the rule "reviewer": "ask" (permissions.task) asks before spawning "reviewer"`},
		{name: "task deny beats Agent ask", ask: "Agent(reviewer)", task: `{"reviewer": "deny"}`, asker: &asker{ok: true},
			want: denied + `(permissions.task "reviewer": "deny")` + noRetry},
		{name: "Agent ask bypassed", ask: "Agent", mode: ModeBypass},
		{name: "unknown mode", mode: "yolo",
			want: `Permission to use Agent denied: the session's permission mode "yolo" is unknown, so nothing but denying is safe`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Mode: tc.mode, Rules: mustRules(t, tc.allow, tc.ask, tc.deny), Task: taskRules(t, tc.task)}
			if tc.asker != nil {
				p.Asker = tc.asker
			}
			agent := tc.agent
			if agent == "" {
				agent = "reviewer"
			}
			err := p.PermitSpawn(context.Background(), agent, taskRules(t, tc.extra))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("denied: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("allowed, want %s", tc.want)
			case tc.want != "" && err.Error() != tc.want:
				t.Errorf("error\n got %s\nwant %s", err, tc.want)
			}
			if err != nil {
				var d *Denied
				if !errors.As(err, &d) || d.Tool != "Agent" || d.Target != agent {
					t.Errorf("error %#v: want a *Denied for Agent %q", err, agent)
				}
			}
			if tc.asker == nil {
				return
			}
			var want []Question
			if tc.asked != "" {
				want = []Question{{Tool: "Agent", Target: agent, Reason: tc.asked}}
			}
			if diff := cmp.Diff(want, tc.asker.got); diff != "" {
				t.Errorf("questions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPermitSpawnAskFailure(t *testing.T) {
	boom := errors.New("prompt closed")
	p := Policy{Task: TaskRules{{"*", ActionAsk}}, Asker: &asker{err: boom}}
	err := p.PermitSpawn(context.Background(), "reviewer", nil)
	if !errors.Is(err, boom) {
		t.Errorf("got %v, want it to wrap the asker's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a := &asker{ok: true}
	p.Asker = a
	if err := p.PermitSpawn(ctx, "reviewer", nil); !errors.Is(err, context.Canceled) || len(a.got) != 0 {
		t.Errorf("cancelled: %v, asked %d times; want context.Canceled without asking", err, len(a.got))
	}
}

func TestSpawnVisible(t *testing.T) {
	p := Policy{
		Rules: mustRules(t, "", "Agent(asker)", "Agent(gone)"),
		Task:  taskRules(t, `{"hidden-*": "deny", "maybe": "ask"}`),
	}
	extra := taskRules(t, `{"mine": "deny", "hidden-y": "allow", "*-x": "allow"}`)
	for agent, want := range map[string]bool{
		"hidden-y": false, // the agent's own allow cannot list what settings deny
		"reviewer": true,
		"gone":     false, // Agent(gone) deny
		"hidden-x": false, // task deny
		"mine":     false, // the calling agent's own rule
		"maybe":    true,  // asks: the user may approve it
		"asker":    true,
	} {
		if got := p.SpawnVisible(agent, extra); got != want {
			t.Errorf("SpawnVisible(%q) = %v, want %v", agent, got, want)
		}
	}
}

func TestSpawnRemoved(t *testing.T) {
	for _, tc := range []struct {
		name        string
		deny        string
		task, extra string
		want        string // "" = kept
	}{
		{name: "nothing"},
		{name: "bare Agent", deny: "Agent", want: "Agent (permissions.deny)"},
		{name: "bare Task", deny: "Task", want: "Task (permissions.deny)"},
		{name: "Agent(*)", deny: "Agent(*)", want: "Agent(*) (permissions.deny)"},
		{name: "named deny keeps the tool", deny: "Agent(reviewer)"},
		{name: "task deny all", task: `{"*": "deny"}`, want: `"*": "deny" (permissions.task)`},
		{name: "task deny then allow", task: `{"*": "deny", "x": "allow"}`},
		{name: "definition cannot bring back a tool the settings removed", task: `{"*": "deny"}`, extra: `{"x": "allow"}`,
			want: `"*": "deny" (permissions.task)`},
		{name: "definition allow all cannot bring it back", task: `{"*": "deny"}`, extra: `{"*": "allow"}`,
			want: `"*": "deny" (permissions.task)`},
		{name: "settings allow again, definition keeps it", task: `{"*": "deny", "x": "allow"}`, extra: `{"y": "allow"}`},
		{name: "definition denies all", task: `{"x": "allow"}`, extra: `{"*": "deny"}`, want: `"*": "deny" (the calling agent's permission.task)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Rules: mustRules(t, "", "", tc.deny), Task: taskRules(t, tc.task)}
			rule, removed := p.SpawnRemoved(taskRules(t, tc.extra))
			if removed != (tc.want != "") || rule != tc.want {
				t.Errorf("SpawnRemoved = %q, %v; want %q", rule, removed, tc.want)
			}
		})
	}
}

func TestChildMode(t *testing.T) {
	for _, tc := range []struct {
		parent Mode
		def    string
		want   Mode
		err    string
	}{
		// issue 22: a child never has more than its parent — a default
		// parent's children are default, not acceptEdits.
		{ModeDefault, "", ModeDefault, ""},
		{"", "", ModeDefault, ""},
		{ModeAcceptEdits, "", ModeAcceptEdits, ""},
		{ModeDefault, "default", ModeDefault, ""},
		{ModeDefault, "plan", ModePlan, ""},
		{ModeDefault, "acceptEdits", ModeDefault, ""},
		{ModeAcceptEdits, "Default", ModeDefault, ""},
		{ModeDefault, "bypassPermissions", ModeDefault, ""},
		{ModeAcceptEdits, "bypassPermissions", ModeAcceptEdits, ""},
		// A bypassPermissions parent's children inherit bypass (Claude
		// Code's rule): the user already said nothing asks.
		{ModeBypass, "bypassPermissions", ModeBypass, ""},
		{ModeBypass, "", ModeBypass, ""},
		{ModeBypass, "default", ModeBypass, ""},
		{ModeDontAsk, "acceptEdits", ModeDontAsk, ""},
		{ModeAuto, "bypassPermissions", ModeAuto, ""},
		{ModeAuto, "plan", ModePlan, ""},
		{ModePlan, "", ModePlan, ""},
		{ModePlan, "acceptEdits", ModePlan, ""},
		{ModePlan, "bypassPermissions", ModePlan, ""},
		{ModeDefault, "yolo", "", `agent permissionMode: unknown permission mode "yolo": want one of plan, dontAsk, default, acceptEdits, auto, bypassPermissions`},
		{"yolo", "", "", `parent permission mode "yolo" is unknown`},
	} {
		got, err := ChildMode(tc.parent, tc.def)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ChildMode(%q, %q): error %v, want %s", tc.parent, tc.def, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ChildMode(%q, %q) = %q, %v; want %q", tc.parent, tc.def, got, err, tc.want)
		}
	}
}
