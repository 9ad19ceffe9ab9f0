package permission

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// FuzzRuleParsing feeds outside text to every parser of permission rules:
// a rule (ParseRule, and ParseRuleList on the same text), a task rule
// (ParseTaskRules and its JSON form) and the two wildcard matchers. They
// must never panic, and what parses must print back to text that parses
// to the same thing.
func FuzzRuleParsing(f *testing.F) {
	// From the tables of TestParseRule, TestParseRuleList, TestWildcardMatch
	// and TestWildcard.
	for _, s := range []string{
		"Bash", "Bash(git diff:*)", "Read(./src/**)", "Edit(docs/**)", "Read(//etc/**)",
		"Read(~/.ssh/**)", "mcp__srv__tool", "mcp__github__*", "Agent(code-reviewer)",
		"  WebFetch(domain:example.com) ", "Bash(echo (nested))", "Bash(*)", "", "   ",
		"Bash(git diff", "Bash)", "Bash(a))", "Bash(a)(b)", "Bash(a)b", "Bash()", "(ls)",
		"Read, Edit", "Ba$h", "my tool(x)", "Read([ab)", " , ", "Bash(git diff:*) Edit,Read",
		"Bash(echo a, b (c)) Read", "Read) Bash", `Bash(echo \*)`,
	} {
		f.Add(s, "*", "deny", "reviewer")
	}
	for _, p := range [][2]string{
		{"*", "team/reviewer"}, {"**", "team/reviewer"}, {"team/*", "team/a/reviewer"},
		{"**/reviewer", "team/a/reviewer"}, {"agent-?", "agent-é"}, {"a.c", "abc"},
		{"a+(b)", "a+(b)"}, {"[x]", "x"}, {"a*b*c", "abxbd"}, {`a\*`, "a*"}, {"", ""},
	} {
		f.Add("Bash", p[0], "Allow", p[1])
	}
	f.Fuzz(func(t *testing.T, rule, pattern, action, subject string) {
		if r, err := ParseRule(rule); err == nil {
			back, err := ParseRule(r.String())
			if err != nil {
				t.Fatalf("ParseRule(%q).String() = %q does not parse: %v", rule, r.String(), err)
			}
			if back != r {
				t.Fatalf("ParseRule(%q) = %+v, but its String %q parses to %+v", rule, r, r.String(), back)
			}
		}
		if rs, err := ParseRuleList(rule); err == nil {
			strs := make([]string, len(rs))
			for i, r := range rs {
				strs[i] = r.String()
			}
			back, err := ParseRuleList(strings.Join(strs, ", "))
			if err != nil {
				t.Fatalf("ParseRuleList(%q) printed as %q does not parse: %v", rule, strs, err)
			}
			if diff := cmp.Diff(rs, back); diff != "" {
				t.Fatalf("ParseRuleList(%q) does not round-trip (-first +second):\n%s", rule, diff)
			}
		}

		if rs, err := ParseTaskRules([][2]string{{pattern, action}}); err == nil {
			b, err := json.Marshal(rs)
			if err != nil {
				t.Fatalf("marshal %+v: %v", rs, err)
			}
			var back TaskRules
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("task rules %+v marshalled as %s do not unmarshal: %v", rs, b, err)
			}
			// JSON carries text, so only valid UTF-8 patterns survive whole.
			if utf8.ValidString(pattern) {
				if diff := cmp.Diff(rs, back); diff != "" {
					t.Fatalf("task rules %s do not round-trip (-first +second):\n%s", b, diff)
				}
			}
			rs.Evaluate(subject)
		}

		got := WildcardMatch(pattern, subject)
		if utf8.ValidString(pattern) && !strings.ContainsAny(pattern, "*?") && got != (pattern == subject) {
			t.Fatalf("WildcardMatch(%q, %q) = %v for a pattern with no wildcard", pattern, subject, got)
		}
		if utf8.ValidString(subject) && strings.Contains(pattern, "**") && strings.Trim(pattern, "*") == "" && !got {
			t.Fatalf("WildcardMatch(%q, %q) = false, but ** matches anything", pattern, subject)
		}

		// The Bash specifier matcher against a dynamic-programming oracle of
		// the same meaning: "*" any run of bytes, "\c" a literal c.
		if len(pattern) <= 256 && len(subject) <= 256 {
			if w, want := wildcard(pattern, subject), wildcardOracle(pattern, subject); w != want {
				t.Fatalf("wildcard(%q, %q) = %v, the oracle says %v", pattern, subject, w, want)
			}
		}
	})
}

// wildcardOracle is wildcard's meaning computed the slow, obvious way:
// m[i][j] tells whether the first i pattern tokens match the first j bytes.
func wildcardOracle(pattern, s string) bool {
	type token struct {
		star bool
		c    byte
	}
	var toks []token
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '*':
			toks = append(toks, token{star: true})
		case c == '\\' && i+1 < len(pattern):
			i++
			toks = append(toks, token{c: pattern[i]})
		default:
			toks = append(toks, token{c: c})
		}
	}
	m := make([][]bool, len(toks)+1)
	for i := range m {
		m[i] = make([]bool, len(s)+1)
	}
	m[0][0] = true
	for i, tk := range toks {
		for j := 0; j <= len(s); j++ {
			switch {
			case tk.star:
				m[i+1][j] = m[i][j] || j > 0 && m[i+1][j-1]
			case j > 0:
				m[i+1][j] = m[i][j-1] && s[j-1] == tk.c
			}
		}
	}
	return m[len(toks)][len(s)]
}
