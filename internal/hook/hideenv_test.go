package hook

import (
	"testing"
)

// TestCommandsDoNotInheritHiddenVariables: a hook command reads what the
// model wrote, so it must not be able to print a provider's key; the
// variables Options.HideEnv names are gone from its environment, the
// rest of it stays.
func TestCommandsDoNotInheritHiddenVariables(t *testing.T) {
	t.Setenv("CADRE_TEST_PROFILE_KEY", "sk-profile-secret")
	t.Setenv("CADRE_TEST_PLAIN", "plain")
	c, _, err := Settings{string(UserPromptSubmit): {{Hooks: []SettingsHook{{Type: "command",
		Command: `printf '%s|%s' "${CADRE_TEST_PROFILE_KEY-unset}" "$CADRE_TEST_PLAIN"`}}}}}.Config("test", "")
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Options{HideEnv: []string{"CADRE_TEST_PROFILE_KEY"}}, c)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Run(t.Context(), Input{Event: UserPromptSubmit, Cwd: t.TempDir(), Prompt: "x"})
	if r.Context != "unset|plain" {
		t.Errorf("the hook saw %q, want the key unset and the rest kept", r.Context)
	}
}
