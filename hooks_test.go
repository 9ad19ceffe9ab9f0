package cadre_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
)

func TestBadHooksAreErrors(t *testing.T) {
	ok := func(context.Context, cadre.HookInput) (cadre.HookOutput, error) { return cadre.HookOutput{}, nil }
	for _, tc := range []struct {
		name  string
		hooks map[cadre.HookEvent][]cadre.HookMatcher
		want  string
	}{
		{"unknown event", map[cadre.HookEvent][]cadre.HookMatcher{"BeforeLunch": {{Hooks: []cadre.HookFunc{ok}}}}, "BeforeLunch"},
		{"bad matcher", map[cadre.HookEvent][]cadre.HookMatcher{cadre.HookPreToolUse: {{Matcher: "([", Hooks: []cadre.HookFunc{ok}}}}, "matcher"},
		{"nil hook", map[cadre.HookEvent][]cadre.HookMatcher{cadre.HookStop: {{Hooks: []cadre.HookFunc{nil}}}}, "nil"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := openErr(t, cadre.Options{Hooks: tc.hooks})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v; want an error naming %q", err, tc.want)
			}
		})
	}
	if err := openErr(t, cadre.Options{Hooks: map[cadre.HookEvent][]cadre.HookMatcher{cadre.HookPreToolUse: {{Matcher: "Bash|Edit", Hooks: []cadre.HookFunc{ok}}}}}); err != nil {
		t.Fatalf("New with a good hook: %v", err)
	}
}
