package cadre

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/provider"
)

// TestAPIKeySourceNamesTheProfilesVariable: the init line says where the
// key comes from by the variable's name, never the key; a run on a
// provider profile names the profile's variable, not the main one's.
func TestAPIKeySourceNamesTheProfilesVariable(t *testing.T) {
	env := map[string]string{"ANTHROPIC_API_KEY": "sk-main-key", "REVIEWER_KEY": "sk-reviewer-key"}
	getenv := func(k string) string { return env[k] }
	providers := map[string]config.Provider{
		"reviewer-acct": {Type: "anthropic", APIKeyEnv: "REVIEWER_KEY"},
		"unset":         {Type: "anthropic", APIKeyEnv: "NOT_SET"},
		"inline":        {Type: "openai", APIKey: "sk-inline"},
	}
	for _, tc := range []struct{ provider, want string }{
		{"anthropic", "ANTHROPIC_API_KEY"},
		{"reviewer-acct", "REVIEWER_KEY"},
		{"unset", "none"},
		{"inline", "settings"},
		{"openai", "none"},
	} {
		if got := apiKeySource(provider.Ref{Provider: tc.provider, Model: "m"}, providers, getenv); got != tc.want {
			t.Errorf("%s: apiKeySource = %q, want %q", tc.provider, got, tc.want)
		}
	}
}
