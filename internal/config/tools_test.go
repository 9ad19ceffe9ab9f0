package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/builtin"
	"github.com/cadre-dev/cadre/internal/permission"
)

// A rule naming no tool is a silent no-op: the user meant something, so
// it is a warning, with the name it was probably meant to be.
func TestUnknownToolWarnings(t *testing.T) {
	for _, tc := range []struct {
		name     string
		settings string
		o        Overrides
		want     []string // substrings of the one warning; nil: no warning
	}{
		{name: "flag deny, wrong case", o: Overrides{DisallowedTools: []string{"bash"}},
			want: []string{`flags: --disallowedTools: unknown tool "bash" (did you mean "Bash"?); deny and ask rules ignore case, so this one applies to Bash`}},
		{name: "flag allow, wrong case", o: Overrides{AllowedTools: []string{"Read,edit"}},
			want: []string{`flags: --allowedTools: unknown tool "edit" (did you mean "Edit"?)`, "allows nothing"}},
		{name: "settings ask, typo", settings: `{"permissions": {"ask": ["Bash(git push:*)", "Bsh(rm:*)"]}}`,
			want: []string{`permissions.ask[1]: unknown tool "Bsh" (did you mean "Bash"?); it matches no tool`}},
		{name: "settings deny, nothing close", settings: `{"permissions": {"deny": ["Frobnicate"]}}`,
			want: []string{`permissions.deny[0]: unknown tool "Frobnicate"; it matches no tool`}},
		{name: "subagents.tools deny, wrong case", settings: `{"subagents": {"tools": {"deny": ["bash"]}}}`,
			want: []string{`subagents.tools.deny[0]: unknown tool "bash" (did you mean "Bash"?); it matches no tool`}},
		{name: "subagents.tools allow, typo", settings: `{"subagents": {"tools": {"allow": ["Gerp"]}}}`,
			want: []string{`subagents.tools.allow[0]: unknown tool "Gerp" (did you mean "Grep"?)`}},
		{name: "MCP names are not known yet", settings: `{"permissions": {"deny": ["mcp__github__create_issue", "mcp__srv"]}, "subagents": {"tools": {"deny": ["mcp__github__*"]}}}`},
		{name: "Claude Code's tools cadre lacks", settings: `{"permissions": {"deny": ["WebFetch", "WebSearch(domain:x.com)", "NotebookEdit"]}}`},
		{name: "cadre's own tools and aliases", o: Overrides{AllowedTools: []string{"Read Edit Write Glob Grep LS Bash(git diff:*) Agent(reviewer) Task SendMessage TaskOutput TaskStop TaskList"}}},
		{name: "other surfaces' tools", settings: `{"permissions": {"allow": ["task", "agent_spawn", "sessions_spawn", "wait_async_results"]}}`},
		{name: "wildcards", settings: `{"permissions": {"deny": ["Ba*"]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			if tc.settings != "" {
				e.write(t, ScopeProject, tc.settings)
			}
			got := e.mustLoad(t, tc.o)
			if tc.want == nil {
				if len(got.Warnings) != 0 {
					t.Errorf("warnings %v, want none", got.Warnings)
				}
				return
			}
			if len(got.Warnings) != 1 {
				t.Fatalf("warnings %v, want one", got.Warnings)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Warnings[0].String(), w) {
					t.Errorf("warning %q does not say %q", got.Warnings[0], w)
				}
			}
		})
	}
}

// Deny and ask rules restrict: one that misses its tool by case would fail
// open, so they match tool names ignoring case. Allow rules widen, so they
// stay exact.
func TestRestrictiveRulesIgnoreCase(t *testing.T) {
	s := Settings{Permissions: Permissions{
		Deny:  []string{"bash", "read(./secret/**)", "mcp__Srv__x", "webfetch"},
		Ask:   []string{"EDIT"},
		Allow: []string{"bash"},
	}}
	r, err := s.Rules()
	if err != nil {
		t.Fatal(err)
	}
	// The rules are kept as written; the permission package matches deny
	// and ask rules' tool names ignoring case, for every source of rules.
	p := permission.Policy{Rules: r}
	if rule, removed := p.Removed("Bash"); !removed || rule != "bash" {
		t.Errorf(`deny "bash" does not remove Bash (%q, %v)`, rule, removed)
	}
	if rule, removed := p.Removed("WebFetch"); !removed || rule != "webfetch" {
		t.Errorf(`deny "webfetch" does not remove WebFetch (%q, %v)`, rule, removed)
	}
	if len(r.Allow) != 1 || r.Allow[0].Tool != "bash" {
		t.Errorf("allow rules = %v, want bash as written (it allows nothing)", r.Allow)
	}
}

// Every built-in tool is a known name: a new tool must be added to
// ToolNames, or rules naming it would be reported as typos.
func TestToolNamesHoldTheBuiltins(t *testing.T) {
	known := ToolNames()
	for _, tl := range builtin.Tools(builtin.Options{}) {
		if name := tl.Info().Name; !slices.Contains(known, name) {
			t.Errorf("built-in tool %s is missing from ToolNames", name)
		}
	}
}
