package permission

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestPermitVerdict: a PreToolUse hook's "allow" approves only what would
// be asked, never what is refused; its "ask" asks even what rules allow.
func TestPermitVerdict(t *testing.T) {
	for _, tc := range []struct {
		name             string
		mode             Mode
		allow, ask, deny string
		tool, arg        string
		verdict          string
		want             string // allow, ask or deny, as decide classifies
		wantAsked        int
		nobody           bool // no Asker
	}{
		{name: "allow skips an ask", tool: "Bash", arg: "make", verdict: "allow", want: "allow"},
		{name: "allow skips an ask with nobody to ask", tool: "Bash", arg: "make", verdict: "allow", want: "allow", nobody: true},
		{name: "allow loses to a deny rule", deny: "Bash(rm:*)", tool: "Bash", arg: "rm -rf /", verdict: "allow", want: "deny"},
		{name: "allow loses to a deny rule on a file", deny: "Edit(./secret)", tool: "Write", arg: "/ws/secret", verdict: "allow", want: "deny"},
		{name: "allow does not cover a protected path", tool: "Write", arg: "/ws/.git/hooks/pre-commit", verdict: "allow", want: "deny", nobody: true},
		{name: "allow puts a protected path to the user", tool: "Write", arg: "/ws/.git/hooks/pre-commit", verdict: "allow", want: "ask", wantAsked: 1},
		{name: "allow loses to plan mode", mode: ModePlan, tool: "Bash", arg: "make", verdict: "allow", want: "deny"},
		{name: "ask asks what an allow rule allows", allow: "Bash(make:*)", tool: "Bash", arg: "make", verdict: "ask", want: "ask", wantAsked: 1},
		{name: "ask asks a read inside", tool: "Read", arg: "/ws/a.go", verdict: "ask", want: "ask", wantAsked: 1},
		{name: "ask asks once what the rules ask", tool: "Bash", arg: "make", verdict: "ask", want: "ask", wantAsked: 1},
		{name: "ask loses to a deny rule", deny: "Bash", tool: "Bash", arg: "make", verdict: "ask", want: "deny"},
		{name: "ask with nobody denies", allow: "Bash", tool: "Bash", arg: "make", verdict: "ask", want: "deny", nobody: true},
		{name: "no verdict is Permit", allow: "Bash", tool: "Bash", arg: "make", verdict: "", want: "allow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Mode: tc.mode, Rules: mustRules(t, tc.allow, tc.ask, tc.deny), Workspace: "/ws"}
			a := &asker{}
			if !tc.nobody {
				p.Asker = a
			}
			_, err := p.PermitVerdict(context.Background(), tc.tool, tools[tc.tool], env, input(tc.tool, tc.arg), tc.verdict, "hook says")
			got := "allow"
			if err != nil {
				var d *Denied
				if !errors.As(err, &d) {
					t.Fatalf("error %T %v, want *Denied", err, err)
				}
				got = "deny"
				if len(a.got) > 0 {
					got = "ask"
				}
			}
			if got != tc.want || len(a.got) != tc.wantAsked {
				t.Errorf("got %s after %d asks (%v), want %s after %d", got, len(a.got), err, tc.want, tc.wantAsked)
			}
			if tc.verdict == "ask" && len(a.got) == 1 && tc.allow != "" && !strings.Contains(a.got[0].Reason, "hook says") {
				t.Errorf("the question does not say the hook asks: %q", a.got[0].Reason)
			}
		})
	}
}
