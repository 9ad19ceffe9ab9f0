package agent

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelNamesAProviderProfile: every definition format with a model
// field names a provider profile the same way, model: "profile:model"
// (OpenCode's "profile/model" too). A known profile loads; an unknown one
// makes the definition invalid, with its file and the profile named,
// rather than quietly running the agent on the parent's account.
func TestModelNamesAProviderProfile(t *testing.T) {
	known := func(p string) bool { return p == "anthropic" || p == "openai" || p == "script" || p == "reviewer-acct" }
	for _, tc := range []struct {
		format, file, body string
	}{
		{"claude", ".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews.\nmodel: %s\n---\nReview.\n"},
		{"cadre dir", ".cadre/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews.\nmodel: %s\n---\nReview.\n"},
		{"opencode", ".opencode/agent/reviewer.md", "---\ndescription: Reviews.\nmodel: %s\n---\nReview.\n"},
		{"harness", "workspace/subagents/reviewer.md", "---\ndescription: Reviews.\nmodel: %s\n---\nReview.\n"},
		{"settings", "", `{"reviewer": {"description": "Reviews.", "prompt": "Review.", "model": %q}}`},
	} {
		models := []string{"reviewer-acct:claude-sonnet-5-5"}
		if tc.format == "opencode" {
			models = append(models, "reviewer-acct/claude-sonnet-5-5")
		}
		for _, model := range models {
			for _, profile := range []string{"reviewer-acct", "reviewr-acct"} {
				model := strings.Replace(model, "reviewer-acct", profile, 1)
				t.Run(tc.format+" "+model, func(t *testing.T) {
					body := strings.Replace(tc.body, "%s", model, 1)
					opts := LoadOptions{KnownProvider: known, SettingsFile: "/home/u/.cadre/settings.json"}
					path := "/home/u/.cadre/settings.json"
					if tc.file == "" {
						b, _ := json.Marshal(model)
						opts.Settings = json.RawMessage(strings.Replace(tc.body, "%q", string(b), 1))
					} else {
						opts.Cwd = tree(t, map[string]string{tc.file: body})
						path = filepath.Join(opts.Cwd, filepath.FromSlash(tc.file))
					}
					r := Load(opts)
					d, ok := r.Get("reviewer")
					if profile == "reviewer-acct" {
						if !ok || d.Model != model {
							t.Fatalf("not loaded (%v): %v", ok, r.Problems())
						}
						return
					}
					if ok {
						t.Fatalf("a definition naming the unknown profile loaded: %+v", d)
					}
					probs := r.Problems()
					if len(probs) != 1 {
						t.Fatalf("problems = %v, want one", probs)
					}
					msg := probs[0].Error()
					for _, want := range []string{path, `the provider profile "reviewr-acct", which is not defined`, "providers.reviewr-acct"} {
						if !strings.Contains(msg, want) {
							t.Errorf("problem %q does not say %q", msg, want)
						}
					}
				})
			}
		}
	}
}

// TestModelsWithoutProfileStillLoad: aliases, bare ids, inherit and the
// built-in providers need no profile; without KnownProvider (a caller
// that does not check) nothing changes.
func TestModelsWithoutProfileStillLoad(t *testing.T) {
	known := func(p string) bool { return p == "anthropic" || p == "openai" || p == "script" }
	for _, model := range []string{"sonnet", "inherit", "claude-haiku-5-5", "anthropic:claude-opus-5-5", "openai/gpt-4o", "meta-llama/Llama-3-8B"} {
		root := tree(t, map[string]string{".claude/agents/a.md": "---\nname: a\ndescription: A.\nmodel: " + model + "\n---\nA.\n"})
		if _, ok := Load(LoadOptions{Cwd: root, KnownProvider: known}).Get("a"); !ok {
			t.Errorf("model %s: not loaded", model)
		}
	}
	root := tree(t, map[string]string{".claude/agents/a.md": "---\nname: a\ndescription: A.\nmodel: nope:x\n---\nA.\n"})
	if _, ok := Load(LoadOptions{Cwd: root}).Get("a"); !ok {
		t.Error("without KnownProvider a model is not checked")
	}
}
