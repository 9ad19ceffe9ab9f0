package main

import (
	"strings"
	"testing"
)

// Without -p, cadre opens the TUI only on a terminal: a program that pipes
// its input and forgot -p gets a one-line error saying so (the TUI itself
// is driven in tmux by tui_e2e_test.go).
func TestNoPrintNeedsATerminal(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no prompt", nil, `run headless with -p "prompt"`},
		{"a prompt", []string{"hello"}, "add -p to run this prompt headless"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("x.yaml", "agents:\n  main:\n    - text: hi\n")
			p := e.run("piped text", append([]string{"--model", "script:x.yaml"}, tc.args...)...)
			if p.code == 0 {
				t.Fatalf("exit 0 without a terminal; stdout %q", p.stdout)
			}
			msg := strings.TrimSpace(p.stderr)
			if !strings.HasPrefix(msg, "cadre: the interactive interface needs a terminal") || !strings.Contains(msg, tc.want) {
				t.Errorf("stderr %q: want the needs-a-terminal error mentioning %q", msg, tc.want)
			}
			if p.stdout != "" {
				t.Errorf("stdout %q: nothing may be written", p.stdout)
			}
		})
	}
}
