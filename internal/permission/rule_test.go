package permission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Mode
		wantErr string
	}{
		{in: "plan", want: ModePlan},
		{in: "default", want: ModeDefault},
		{in: "acceptEdits", want: ModeAcceptEdits},
		{in: "bypassPermissions", want: ModeBypass},
		{in: " AcceptEdits ", want: ModeAcceptEdits},
		{in: "", wantErr: "empty permission mode: want one of plan, dontAsk, default, acceptEdits, auto, bypassPermissions"},
		{in: "yolo", wantErr: `unknown permission mode "yolo": want one of plan, dontAsk, default, acceptEdits, auto, bypassPermissions`},
	} {
		got, err := ParseMode(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ParseMode(%q) error = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Rule
		str     string // String(); "" means in
		wantErr string
	}{
		{in: "Bash", want: Rule{Tool: "Bash"}},
		{in: "Bash(git diff:*)", want: Rule{Tool: "Bash", Specifier: "git diff:*"}},
		{in: "Read(./src/**)", want: Rule{Tool: "Read", Specifier: "./src/**"}},
		{in: "Edit(docs/**)", want: Rule{Tool: "Edit", Specifier: "docs/**"}},
		{in: "Read(//etc/**)", want: Rule{Tool: "Read", Specifier: "//etc/**"}},
		{in: "Read(~/.ssh/**)", want: Rule{Tool: "Read", Specifier: "~/.ssh/**"}},
		{in: "mcp__srv__tool", want: Rule{Tool: "mcp__srv__tool"}},
		{in: "mcp__github__*", want: Rule{Tool: "mcp__github__*"}},
		{in: "Agent(code-reviewer)", want: Rule{Tool: "Agent", Specifier: "code-reviewer"}},
		{in: "  WebFetch(domain:example.com) ", want: Rule{Tool: "WebFetch", Specifier: "domain:example.com"}, str: "WebFetch(domain:example.com)"},
		{in: "Bash(echo (nested))", want: Rule{Tool: "Bash", Specifier: "echo (nested)"}},
		{in: "Bash(*)", want: Rule{Tool: "Bash", Specifier: "*"}},
		{in: "", wantErr: "empty permission rule"},
		{in: "   ", wantErr: "empty permission rule"},
		{in: "Bash(git diff", wantErr: "unbalanced parentheses"},
		{in: "Bash)", wantErr: "unbalanced parentheses"},
		{in: "Bash(a))", wantErr: "unbalanced parentheses"},
		{in: "Bash(a)(b)", wantErr: "unbalanced parentheses"},
		{in: "Bash(a)b", wantErr: "unbalanced parentheses"},
		{in: "Bash()", wantErr: "empty specifier: write Bash alone"},
		{in: "(ls)", wantErr: "missing tool name"},
		{in: "Read, Edit", wantErr: `bad tool name "Read, Edit"`},
		{in: "Ba$h", wantErr: `bad tool name "Ba$h"`},
		{in: "my tool(x)", wantErr: `bad tool name "my tool"`},
		{in: "Read([ab)", wantErr: "bad path pattern"},
	} {
		got, err := ParseRule(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseRule(%q) error = %v, want it to contain %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRule(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("ParseRule(%q) (-want +got):\n%s", tc.in, diff)
		}
		str := tc.str
		if str == "" {
			str = tc.in
		}
		if got.String() != str {
			t.Errorf("ParseRule(%q).String() = %q, want %q", tc.in, got.String(), str)
		}
	}
}

func TestParseRuleList(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: nil},
		{in: " , ", want: nil},
		{in: "Bash(git diff:*) Edit,Read", want: []string{"Bash(git diff:*)", "Edit", "Read"}},
		{in: "Read, Grep,  Glob", want: []string{"Read", "Grep", "Glob"}},
		{in: "Bash(npm run test:*),Bash(git log:*)\tWrite", want: []string{"Bash(npm run test:*)", "Bash(git log:*)", "Write"}},
		{in: "Bash(echo a, b (c)) Read", want: []string{"Bash(echo a, b (c))", "Read"}},
		{in: "Bash(git diff:* Read", wantErr: "a ( is never closed"},
		{in: "Read) Bash", wantErr: "unbalanced parentheses at offset 4"},
		{in: "Read Ba$h", wantErr: `bad tool name "Ba$h"`},
	} {
		got, err := ParseRuleList(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseRuleList(%q) error = %v, want it to contain %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRuleList(%q): %v", tc.in, err)
			continue
		}
		var strs []string
		for _, r := range got {
			strs = append(strs, r.String())
		}
		if diff := cmp.Diff(tc.want, strs); diff != "" {
			t.Errorf("ParseRuleList(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}
