package permission

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// answering answers every question with ans and records the questions.
type answering struct {
	mu  sync.Mutex
	ans Answer
	err error
	got []Question
}

func (a *answering) Ask(_ context.Context, q Question) (Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, q)
	return a.ans, a.err
}

func (a *answering) asked() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.got)
}

func permitInput(p *Policy, toolName, arg string) (json.RawMessage, error) {
	return p.PermitInput(context.Background(), toolName, tools[toolName], env, input(toolName, arg))
}

func TestUpdatedInputRunsInsteadOfTheModels(t *testing.T) {
	a := &answering{ans: Answer{Allow: true, UpdatedInput: input("Bash", "echo safer")}}
	p := Policy{Mode: ModeDefault, Workspace: "/ws", Asker: a}
	got, err := permitInput(&p, "Bash", "echo hi")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(input("Bash", "echo safer")) {
		t.Errorf("input to run %s", got)
	}
	// Permit, whose caller runs the model's input, refuses such an approval.
	if err := p.Permit(context.Background(), "Bash", tools["Bash"], env, input("Bash", "echo hi")); err == nil {
		t.Error("Permit allowed a call whose approval changed its input")
	}
}

// Attack: the approver (a front end, a program on the SDK protocol) hands
// back an input that a deny rule forbids. The deny rule still wins.
func TestUpdatedInputIsCheckedAgainstDenyRules(t *testing.T) {
	for _, tc := range []struct{ name, tool, arg, updated, deny string }{
		{"a denied command", "Bash", "echo hi", "rm -rf /", "Bash(rm:*)"},
		{"a denied command behind a wrapper", "Bash", "echo hi", "sudo rm -rf /", "Bash(rm:*)"},
		{"a command the deny rule cannot be checked against", "Bash", "echo hi", `eval "$X"`, "Bash(rm:*)"},
		{"a denied path", "Write", "/ws/a.txt", "/ws/secrets/key", "Edit(/secrets/**)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &answering{ans: Answer{Allow: true, UpdatedInput: input(tc.tool, tc.updated)}}
			p := Policy{Mode: ModeDefault, Workspace: "/ws", Project: "/ws", Rules: mustRules(t, "", "", tc.deny), Asker: a}
			got, err := permitInput(&p, tc.tool, tc.arg)
			var d *Denied
			if !errors.As(err, &d) {
				t.Fatalf("input %s, err %v: want a denial", got, err)
			}
			if !strings.Contains(d.Error(), "changed input is refused") {
				t.Errorf("denial %q does not say the changed input was refused", d.Error())
			}
			if a.asked() != 1 {
				t.Errorf("asked %d times, want once (the changed input is never asked about)", a.asked())
			}
		})
	}
}

func TestARefusalCarriesItsMessageAndInterrupt(t *testing.T) {
	a := &answering{ans: Answer{Message: "use the staging server", Interrupt: true}}
	p := Policy{Mode: ModeDefault, Workspace: "/ws", Asker: a}
	_, err := permitInput(&p, "Bash", "deploy prod")
	var d *Denied
	if !errors.As(err, &d) || !d.Interrupts() || !strings.Contains(d.Error(), "use the staging server") {
		t.Fatalf("err %v", err)
	}
}

func TestRememberedRulesApproveLaterCalls(t *testing.T) {
	grants := &Remembered{}
	a := &answering{ans: Answer{Allow: true, Remember: []string{"Bash(npm test:*)"}}}
	p := Policy{Mode: ModeDefault, Workspace: "/ws", Asker: a, Remembered: grants}
	if _, err := permitInput(&p, "Bash", "npm test"); err != nil {
		t.Fatal(err)
	}
	a.ans = Answer{} // from now on the user says no
	if _, err := permitInput(&p, "Bash", "npm test --watch"); err != nil {
		t.Errorf("a remembered rule did not approve: %v", err)
	}
	// A child's policy derived from this one shares the grants.
	child := p
	child.Mode = ModeAcceptEdits
	if _, err := permitInput(&child, "Bash", "npm test"); err != nil {
		t.Errorf("the child's policy does not see the grant: %v", err)
	}
	if _, err := permitInput(&p, "Bash", "npm publish"); err == nil || a.asked() != 2 {
		t.Errorf("a call the rule does not cover: err %v, asked %d", err, a.asked())
	}
	// Another conversation's policy has grants of its own.
	other := p
	other.Remembered = &Remembered{}
	if _, err := permitInput(&other, "Bash", "npm test"); err == nil {
		t.Error("a rule remembered in one conversation approved a call in another")
	}
	if diff := cmp.Diff([]string{"Bash(npm test:*)"}, grants.Strings()); diff != "" {
		t.Errorf("grants (-want +got):\n%s", diff)
	}
}

// Attack: a remembered rule must not widen what the mode allows, nor pass
// a rule or protection that an allow rule cannot.
func TestRememberedRulesAreOnlyAllowRules(t *testing.T) {
	grants := &Remembered{}
	if err := grants.Add("Bash", "Edit", "Write"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		mode      Mode
		allow     string
		ask, deny string
		tool, arg string
		want      string
	}{
		{name: "plan mode stays read-only", mode: ModePlan, tool: "Bash", arg: "ls", want: "deny"},
		{name: "a deny rule wins", mode: ModeDefault, deny: "Bash(rm:*)", tool: "Bash", arg: "rm x", want: "deny"},
		{name: "an ask rule still asks", mode: ModeDefault, ask: "Bash(git push:*)", tool: "Bash", arg: "git push", want: "ask"},
		{name: "a protected path still asks", mode: ModeDefault, tool: "Write", arg: "/ws/.git/config", want: "ask"},
		{name: "a command's writes still ask", mode: ModeDefault, tool: "Bash", arg: "echo x > /ws/.cadre/settings.json", want: "ask"},
		{name: "the grant approves the rest", mode: ModeDefault, tool: "Bash", arg: "ls", want: "allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Mode: tc.mode, Workspace: "/ws", Project: "/ws", Rules: mustRules(t, tc.allow, tc.ask, tc.deny), Remembered: grants}
			if got := decide(t, p, tc.tool, tc.arg); got != tc.want {
				t.Errorf("%s %q: %s, want %s", tc.tool, tc.arg, got, tc.want)
			}
		})
	}
}

func TestABadRuleToRememberFailsTheAsk(t *testing.T) {
	grants := &Remembered{}
	a := &answering{ans: Answer{Allow: true, Remember: []string{"Bash(npm test:*)", "Bash(unbalanced"}}}
	p := Policy{Mode: ModeDefault, Workspace: "/ws", Asker: a, Remembered: grants}
	if _, err := permitInput(&p, "Bash", "npm test"); err == nil {
		t.Error("allowed with a rule to remember that is not a rule")
	}
	if len(grants.Rules()) != 0 {
		t.Errorf("grants %v: want none (all or nothing)", grants.Strings())
	}
	// With no grant set (a policy outside any conversation) Remember fails
	// loudly rather than being forgotten.
	p.Remembered = nil
	a.ans.Remember = []string{"Bash"}
	if _, err := permitInput(&p, "Bash", "npm test"); err == nil {
		t.Error("allowed with a rule to remember and nowhere to keep it")
	}
}

func TestSuggestions(t *testing.T) {
	for _, tc := range []struct {
		tool, arg string
		ask       string
		want      []string
	}{
		{tool: "Bash", arg: "npm test --watch", want: []string{"Bash(npm test:*)"}},
		{tool: "Bash", arg: "ls -la && go vet ./...", want: []string{"Bash(ls:*)", "Bash(go vet:*)"}},
		{tool: "Bash", arg: "./build.sh fast", want: []string{"Bash(./build.sh fast:*)"}},
		{tool: "Bash", arg: "echo $(whoami)", want: nil},
		{tool: "Edit", arg: "/ws/src/a.go", want: []string{"Edit(//ws/src/**)"}},
		{tool: "Read", arg: "/etc/hosts", want: []string{"Read(//etc/**)"}},
		{tool: "WebFetch", arg: "https://example.com", want: []string{"WebFetch"}},
		{tool: "Edit", arg: "/ws/.git/config", want: nil},                   // protected: no rule can approve
		{tool: "Bash", arg: "git push", ask: "Bash(git push:*)", want: nil}, // an ask rule asks every time
	} {
		a := &answering{}
		p := Policy{Mode: ModeDefault, Workspace: "/ws", Project: "/ws", Rules: mustRules(t, "", tc.ask, ""), Asker: a}
		permitInput(&p, tc.tool, tc.arg)
		if a.asked() != 1 {
			t.Errorf("%s %q: asked %d times", tc.tool, tc.arg, a.asked())
			continue
		}
		if diff := cmp.Diff(tc.want, a.got[0].Suggestions); diff != "" {
			t.Errorf("%s %q suggestions (-want +got):\n%s", tc.tool, tc.arg, diff)
		}
	}
}

// TestExactRules: the rules a "for this project" approval saves approve
// the asked call again, and no wider one.
func TestExactRules(t *testing.T) {
	for _, tc := range []struct {
		tool, arg string
		want      []string
		edits     bool
	}{
		{tool: "Bash", arg: "touch ran.txt && echo BASH-RAN", want: []string{"Bash(touch ran.txt)", "Bash(echo BASH-RAN)"}},
		{tool: "Bash", arg: "npm   test", want: []string{"Bash(npm test)"}},
		{tool: "Bash", arg: "rm *.o", want: nil},         // a rule would read * as a wildcard
		{tool: "Bash", arg: "echo $(whoami)", want: nil}, // a substitution: no rule approves it
		{tool: "Edit", arg: "/ws/src/a.go", want: nil, edits: true},
		{tool: "WebFetch", arg: "https://example.com", want: nil},
	} {
		a := &answering{}
		p := Policy{Mode: ModeDefault, Workspace: "/ws", Project: "/ws", Asker: a}
		permitInput(&p, tc.tool, tc.arg)
		if a.asked() != 1 {
			t.Errorf("%s %q: asked %d times", tc.tool, tc.arg, a.asked())
			continue
		}
		q := a.got[0]
		if diff := cmp.Diff(tc.want, q.Exact); diff != "" {
			t.Errorf("%s %q exact rules (-want +got):\n%s", tc.tool, tc.arg, diff)
		}
		if q.Edits != tc.edits {
			t.Errorf("%s %q: Edits = %v", tc.tool, tc.arg, q.Edits)
		}
		if len(q.Exact) == 0 {
			continue
		}
		// Remembered, they approve the same call without asking, and
		// not another.
		again := &answering{}
		p = Policy{Mode: ModeDefault, Workspace: "/ws", Project: "/ws", Rules: mustRules(t, strings.Join(q.Exact, ","), "", ""), Asker: again}
		if _, err := permitInput(&p, tc.tool, tc.arg); err != nil || again.asked() != 0 {
			t.Errorf("%s %q with %v: err %v, asked %d, want allowed without asking", tc.tool, tc.arg, q.Exact, err, again.asked())
		}
		permitInput(&p, tc.tool, tc.arg+" more")
		if again.asked() != 1 {
			t.Errorf("%s %q with %v: a longer command was not asked about", tc.tool, tc.arg, q.Exact)
		}
	}
}

func TestIdentifyNamesTheAskingAgent(t *testing.T) {
	a := &answering{}
	main := Identify(a, Identity{Agent: "main"})
	child := Identify(main, Identity{Agent: "reviewer", AgentID: "a1", ParentToolUseID: "toolu_1"})
	grandchild := Identify(child, Identity{Agent: "linter", AgentID: "a2", ParentToolUseID: "toolu_2"})
	for _, asker := range []Asker{main, child, grandchild} {
		asker.Ask(context.Background(), Question{Tool: "Bash"})
	}
	want := []Identity{{Agent: "main"}, {"reviewer", "a1", "toolu_1"}, {"linter", "a2", "toolu_2"}}
	for i, q := range a.got {
		if got := (Identity{q.Agent, q.AgentID, q.ParentToolUseID}); got != want[i] {
			t.Errorf("question %d names %+v, want %+v", i, got, want[i])
		}
	}
	if Identify(nil, Identity{Agent: "main"}) != nil {
		t.Error("Identify(nil) is an asker: nobody can be asked")
	}
}

func TestRememberedIsSafeForConcurrentUse(t *testing.T) {
	g := &Remembered{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			g.Add("Bash(job" + string(rune('a'+i)) + ":*)")
			_ = g.Rules()
		})
	}
	wg.Wait()
	if n := len(g.Rules()); n != 8 {
		t.Errorf("%d rules, want 8", n)
	}
}
