package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bashScenario is a scripted model that makes the given Bash calls in one
// turn, then ends.
func bashScenario(cmds ...string) string {
	var b strings.Builder
	b.WriteString("agents:\n  main:\n    - text: Running the commands.\n      tool_use:\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "        - name: Bash\n          input: {command: %q}\n", c)
	}
	b.WriteString("    - text: Done.\n")
	return b.String()
}

// bashResults runs cadre on the scenario and returns each Bash call's
// result: its text and whether it is an error.
func bashResults(t *testing.T, e *env, n int, args ...string) (texts []string, isErr []bool) {
	t.Helper()
	p := e.run("", append([]string{"-p", "run them", "--model", "script:s.yaml", "--output-format", "stream-json", "--verbose"}, args...)...)
	if p.code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", p.code, p.stderr, p.stdout)
	}
	for _, r := range toolResults(t, p.stdout) {
		texts = append(texts, fmt.Sprint(r["content"]))
		isErr = append(isErr, r["is_error"] == true)
	}
	if len(texts) != n {
		t.Fatalf("%d tool results, want %d:\n%s", len(texts), n, p.stdout)
	}
	return texts, isErr
}

// An allow rule for a command approves the command, not a file it writes
// by redirection: outside the workspace that needs approval, which a
// headless run cannot give.
func TestBashAllowRuleDoesNotApproveRedirectedWrites(t *testing.T) {
	writes := []string{
		"echo x > ../outside1.txt",
		"echo x 2> ../outside2.txt",
		"echo x >& ../outside3.txt",
		"echo x &> ../outside4.txt",
		"echo x >> ../outside5.txt",
	}
	for _, mode := range []string{"default", "acceptEdits"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			e.write("s.yaml", bashScenario(append(writes, "echo fine", "echo quiet > /dev/null 2>&1")...))
			texts, isErr := bashResults(t, e, len(writes)+2, "--allowedTools", "Bash(echo:*)", "--permission-mode", mode)
			for i, cmd := range writes {
				if !isErr[i] || !strings.Contains(texts[i], "writes") || !strings.Contains(texts[i], "outside") {
					t.Errorf("%q: result %q (error %v), want a refusal saying it writes outside", cmd, texts[i], isErr[i])
				}
				name := fmt.Sprintf("outside%d.txt", i+1)
				if _, err := os.Stat(filepath.Join(e.dir, "..", name)); !os.IsNotExist(err) {
					t.Errorf("%q: %s exists (stat: %v)", cmd, name, err)
				}
			}
			if n := len(writes); isErr[n] || !strings.Contains(texts[n], "fine") || isErr[n+1] {
				t.Errorf("the allowed commands did not run: %q %v, %q %v", texts[n], isErr[n], texts[n+1], isErr[n+1])
			}
		})
	}
}

// A Bash deny rule holds however the command is spelt: through a path, a
// wrapper, a shell's -c or eval.
func TestBashDenyRuleLooksThroughWrappers(t *testing.T) {
	cmds := []string{
		"/bin/rm f1",
		"command rm f2",
		"env rm f3",
		"sh -c 'rm f4'",
		`bash -c "rm f5"`,
		"eval rm f6",
		"nice -n 5 timeout 10 rm f7",
		"echo f8 | xargs rm",
	}
	e := newEnv(t)
	for i := range cmds {
		e.write(fmt.Sprintf("f%d", i+1), "keep me\n")
	}
	e.write("s.yaml", bashScenario(append(cmds, "ls f1")...))
	// Bash is allowed, so only the deny rule stands between the model and rm.
	texts, isErr := bashResults(t, e, len(cmds)+1, "--allowedTools", "Bash", "--disallowedTools", "Bash(rm:*)")
	for i, cmd := range cmds {
		if !isErr[i] || !strings.Contains(texts[i], "Bash(rm:*)") {
			t.Errorf("%q: result %q (error %v), want a denial by Bash(rm:*)", cmd, texts[i], isErr[i])
		}
		if _, err := os.Stat(filepath.Join(e.dir, fmt.Sprintf("f%d", i+1))); err != nil {
			t.Errorf("%q: the file is gone: %v", cmd, err)
		}
	}
	if n := len(cmds); isErr[n] || !strings.Contains(texts[n], "f1") {
		t.Errorf("ls f1: %q (error %v), want it to run", texts[n], isErr[n])
	}
}

// What cannot be read before it runs cannot be checked against a deny
// rule, so it is not run without approval.
func TestBashUnreadableCommandAsksUnderADenyRule(t *testing.T) {
	cmds := []string{
		`x=rm; $x g1`,
		`eval "$(echo rm) g2"`,
		`echo 'rm g3' | sh`,
	}
	e := newEnv(t)
	for i := range cmds {
		e.write(fmt.Sprintf("g%d", i+1), "keep me\n")
	}
	e.write("s.yaml", bashScenario(cmds...))
	texts, isErr := bashResults(t, e, len(cmds), "--allowedTools", "Bash", "--disallowedTools", "Bash(rm:*)")
	for i, cmd := range cmds {
		if !isErr[i] || !strings.Contains(texts[i], "cannot be checked") {
			t.Errorf("%q: result %q (error %v), want a refusal saying the deny rule cannot be checked", cmd, texts[i], isErr[i])
		}
		if _, err := os.Stat(filepath.Join(e.dir, fmt.Sprintf("g%d", i+1))); err != nil {
			t.Errorf("%q: the file is gone: %v", cmd, err)
		}
	}
}
