package sandbox

import (
	"os/exec"
	"slices"
	"testing"
)

// TestCommandHidesVariables: whatever the mode — off, or auto on a
// machine that cannot sandbox, or a command excluded from the walls —
// a command prepared by the Runner has none of HideEnv.
func TestCommandHidesVariables(t *testing.T) {
	t.Setenv("CADRE_TEST_KEY", "sk-secret")
	for _, r := range []*Runner{
		{Mode: ModeOff, HideEnv: []string{"CADRE_TEST_KEY"}},
		{Mode: ModeAuto, Status: Status{Reason: "test"}, HideEnv: []string{"CADRE_TEST_KEY"}},
		{Mode: ModeAuto, Excluded: func(string) bool { return true }, HideEnv: []string{"CADRE_TEST_KEY"}},
	} {
		for _, env := range [][]string{nil, {"A=1", "CADRE_TEST_KEY=given", "B=2"}} {
			cmd := exec.Command("true")
			cmd.Env = env
			if _, err := r.Command(cmd, t.TempDir(), "true"); err != nil {
				t.Fatal(err)
			}
			if cmd.Env == nil {
				t.Fatalf("mode %s: the command inherits the whole environment", r.Mode)
			}
			if slices.ContainsFunc(cmd.Env, func(kv string) bool { return len(kv) >= 15 && kv[:15] == "CADRE_TEST_KEY=" }) {
				t.Errorf("mode %s: env still holds the key: %v", r.Mode, cmd.Env)
			}
			if env != nil && !slices.Equal(cmd.Env, []string{"A=1", "B=2"}) {
				t.Errorf("mode %s: env = %v, want the rest kept in order", r.Mode, cmd.Env)
			}
		}
	}
}
