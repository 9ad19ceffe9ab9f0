package shellcmd

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAnalyzeCommandWrites(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string // op and target value, or op and raw text when not static
	}{
		{"echo x > a 2>> b &> c &>> d >| e 3> f <> g >&h", []string{"> a", "2>> b", "&> c", "&>> d", ">| e", "3> f", "<> g", ">& h"}},
		{"echo x 2>&1 >&2 3>&- 4>&2- < in <<< w", nil},
		{`echo x > "a b" > 'c'd > e\ f`, []string{"> a b", "> cd", "> e f"}},
		{"echo x > $f > ${g}x > $(h)", []string{"> $f", "> ${g}x", "> $(h)"}},
		{"{ echo x; } > a; (echo y) >> b", []string{"> a", ">> b"}},
		{"sh -c 'echo > inner'", []string{"> inner"}},
		{"command time --output=t -a ls", []string{"time --output t"}},
		{"cat <<EOF > out\n$(echo hi)\nEOF", []string{"> out"}},
	} {
		a := Analyze(tc.cmd)
		var got []string
		for _, w := range a.Writes {
			v := w.Target.Value
			if !w.Target.Static {
				v = w.Target.Raw
			}
			got = append(got, w.Op+" "+v)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("writes of %q = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestAnalyzeCommandLooks(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want string // one of the forms deny rules see
	}{
		{"/usr/bin/env -i A=1 nice -n 3 'r'm -rf x", "rm -rf x"},
		{"FOO=1 git \"push\" origin", "git push origin"},
		{"sudo -u root timeout -k 1 9 /bin/rm -rf /", "rm -rf /"},
		{`bash -c "sh -c 'eval git push'"`, "git push"},
		{"xargs -I{} -P4 git rm {}", "git rm {}"},
		// An option not known here: the command may start at any later word.
		{"timeout --new-option X rm f", "rm f"},
	} {
		a := Analyze(tc.cmd)
		if !slices.Contains(a.Looks, tc.want) {
			t.Errorf("forms of %q = %q, want one to be %q", tc.cmd, a.Looks, tc.want)
		}
	}
}

// TestAnalyzeCommandBounds: hostile input is refused quickly, as not
// statically readable, never read at length. (That no allow rule approves
// such a command is permission's TestUnreadableCommandsAreNeverApproved.)
func TestAnalyzeCommandBounds(t *testing.T) {
	nestedSh := "rm f"
	for range maxScriptDepth + 2 {
		nestedSh = "sh -c " + shellQuote(nestedSh)
	}
	for _, tc := range []struct {
		name, cmd, reason string
	}{
		{"long", "echo " + strings.Repeat("a", maxCommandBytes), "longer than"},
		{"deep brackets", strings.Repeat("(", 5000) + "ls" + strings.Repeat(")", 5000), "nested more than"},
		{"deep substitutions", strings.Repeat("$(", 3000) + "ls" + strings.Repeat(")", 3000), "nested more than"},
		{"deep sh -c", nestedSh, "scripts nested more than"},
		{"many wrappers", strings.Repeat("env ", 2*maxWrappers) + "rm f", "wrapper commands in a row"},
		{"deep keywords", strings.Repeat("if true; then ", 3500) + "ls" + strings.Repeat("; fi", 3500), ""},
		{"many words", strings.Repeat("nice ", maxCommandBytes/5-1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			a := Analyze(tc.cmd)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if tc.reason != "" && !strings.Contains(strings.Join(a.Opaque, "\n"), tc.reason) {
				t.Errorf("opaque = %q, want a reason with %q", a.Opaque, tc.reason)
			}
		})
	}
}

// shellQuote quotes s for a POSIX shell, for building test commands.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
