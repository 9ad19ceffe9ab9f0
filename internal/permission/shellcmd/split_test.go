package shellcmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSplitCommand(t *testing.T) {
	for _, tc := range []struct {
		in        string
		inner     bool
		want      []string
		wantSubst bool
	}{
		{in: "git diff", want: []string{"git diff"}},
		{in: "  git   diff \t HEAD  ", want: []string{"git diff HEAD"}},
		{in: "make && make test || echo fail; ls | wc -l", want: []string{"make", "make test", "echo fail", "ls", "wc -l"}},
		{in: "sleep 1 & rm x", want: []string{"sleep 1", "rm x"}},
		{in: "a\nb\n\nc", want: []string{"a", "b", "c"}},
		{in: "a |& b", want: []string{"a", "b"}},
		{in: "make 2>&1 >&2 &>log >|out", want: []string{"make 2>&1 >&2 &>log >|out"}},
		{in: `echo "a && b; c | d"`, want: []string{`echo "a && b; c | d"`}},
		{in: `echo 'a && b' && rm x`, want: []string{`echo 'a && b'`, "rm x"}},
		{in: `echo "a   b"   c`, want: []string{`echo "a   b" c`}},
		{in: `echo a\;b; ls`, want: []string{`echo a\;b`, "ls"}},
		{in: "git \\\n  diff", want: []string{"git diff"}},
		{in: "echo $(rm -rf x)", want: []string{"echo $(rm -rf x)"}, wantSubst: true},
		{in: "echo $(rm -rf x)", inner: true, want: []string{"echo", "rm -rf x"}, wantSubst: true},
		{in: "echo `rm x`", inner: true, want: []string{"echo", "rm x"}, wantSubst: true},
		{in: `echo "$(rm x)"`, inner: true, want: []string{`echo "`, "rm x", `"`}, wantSubst: true},
		{in: "diff <(ls a) b", want: []string{"diff <(ls a) b"}, wantSubst: true},
		{in: "(cd x && rm y)", inner: true, want: []string{"cd x", "rm y"}},
		{in: `echo '$(not run)'`, want: []string{`echo '$(not run)'`}},
		{in: "", want: nil},
	} {
		got, subst := splitCommand(tc.in, tc.inner)
		if diff := cmp.Diff(tc.want, got); diff != "" || subst != tc.wantSubst {
			t.Errorf("splitCommand(%q, %v) subst=%v (want %v) (-want +got):\n%s", tc.in, tc.inner, subst, tc.wantSubst, diff)
		}
	}
}

func TestStripAssignmentsAndUnquote(t *testing.T) {
	for in, want := range map[string]string{
		"FOO=1 git push":      "git push",
		"A=1 B='x y' ls":      "ls",
		"git push":            "git push",
		"=x ls":               "=x ls",
		"1A=2 ls":             "1A=2 ls",
		"FOO=1":               "FOO=1",
		`A="x \" y" ls -l`:    "ls -l",
		`./a=b ls`:            `./a=b ls`,
		`PATH=/x:$PATH make`:  "make",
		`X=$(rm -rf /) ls -a`: "ls -a",
	} {
		if got := stripAssignments(in); got != want {
			t.Errorf("stripAssignments(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`git "push"`:    "git push",
		`git 'pu'sh`:    "git push",
		`git pu\sh`:     "git push",
		`echo "a \" b"`: `echo a " b`,
		`echo "a \n"`:   `echo a \n`,
		`echo 'a \" b'`: `echo a \" b`,
		"plain words":   "plain words",
	} {
		if got := unquote(in); got != want {
			t.Errorf("unquote(%q) = %q, want %q", in, got, want)
		}
	}
}
