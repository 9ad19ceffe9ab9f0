package permission

import (
	"context"
	"encoding/json"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/permission/shellcmd"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// FuzzBashCommand feeds outside text, a model's command, to the Bash
// analysis and to Permit. Properties: nothing panics; the analysis takes
// bounded time; and an allow decision is checked against the parser's
// tree directly, an oracle independent of the analysis:
//
//   - under Bash(echo:*) in default mode, every simple command is echo and
//     nothing but a standard stream is written;
//   - under a bare Bash allow with Bash(rm:*) and Bash(eval:*) denied in
//     acceptEdits, no command is named rm or eval (with any directory),
//     no command name is built at run time, and every redirection writes
//     a file whose name is plain text inside the workspace.
func FuzzBashCommand(f *testing.F) {
	for _, cases := range [][]bashCase{bashRedirectCases(), bashDenyCases(), bashAllowCases()} {
		for _, tc := range cases {
			f.Add(tc.cmd)
		}
	}
	// From TestMatchCommandRule and TestSplitCommand.
	for _, s := range []string{
		"git diff HEAD~1 -- a.go", "git  diff   HEAD", "npm run test -- --watch", "npm run test:unit",
		"git push origin main", "echo *", "git diff && rm -rf /", "ls; rm -rf x", "cat x | rm y",
		"echo 'x; rm y'", "echo $(whoami)", "echo $(rm -rf x)", "echo `rm -rf x`", `echo "$(rm x)"`,
		"FOO=1 BAR='a b' git push origin", `git "push" origin`, `git pu\sh`, "",
		"make && make test || echo fail; ls | wc -l", "sleep 1 & rm x", "a\nb\n\nc", "a |& b",
		"make 2>&1 >&2 &>log >|out", `echo "a && b; c | d"`, `echo a\;b; ls`, "git \\\n  diff",
		"diff <(ls a) b", "(cd x && rm y)", `echo '$(not run)'`,
	} {
		f.Add(s)
	}

	echoOnly := Policy{Workspace: "/ws", Home: "/home/u", Rules: mustRules(f, "Bash(echo:*)", "", "")}
	noRm := Policy{Mode: ModeAcceptEdits, Workspace: "/ws", Home: "/home/u", Rules: mustRules(f, "Bash", "", "Bash(rm:*) Bash(eval:*)")}

	f.Fuzz(func(t *testing.T, cmd string) {
		// The command reaches Permit as JSON, which carries text only: what
		// is checked below is what Permit sees.
		in := input("Bash", cmd)
		if cmd != "" {
			var c cmdIn
			if err := json.Unmarshal(in, &c); err != nil {
				t.Fatal(err)
			}
			cmd = c.Command
		}
		start := time.Now()
		a := shellcmd.Analyze(cmd)
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("analysing %d bytes took %v", len(cmd), d)
		}
		if len(a.Opaque) > 0 && commandMatches(a, "*", listAllow) {
			t.Fatalf("an allow rule approved %q, which cannot be read (%q)", cmd, a.Opaque)
		}

		permit := func(p Policy) bool {
			return p.Permit(context.Background(), "Bash", tools["Bash"], env, in) == nil
		}
		if permit(echoOnly) {
			file := parseOracle(t, cmd)
			syntax.Walk(file, func(n syntax.Node) bool {
				switch x := n.(type) {
				case *syntax.CallExpr:
					if len(x.Assigns) > 0 || len(x.Args) == 0 || x.Args[0].Lit() != "echo" {
						t.Fatalf("Bash(echo:*) approved %q, which runs a command that is not echo", cmd)
					}
				case *syntax.Stmt:
					if x.Cmd == nil {
						t.Fatalf("Bash(echo:*) approved %q, which has a statement without a command", cmd)
					}
				case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.DeclClause, *syntax.TestClause, *syntax.ArithmCmd, *syntax.LetClause:
					t.Fatalf("Bash(echo:*) approved %q, which holds a %T", cmd, n)
				case *syntax.Redirect:
					if target, ok := oracleWrite(x); ok && !isStream(target) {
						t.Fatalf("Bash(echo:*) in default mode approved %q, which writes %q", cmd, target)
					}
				}
				return true
			})
		}
		if permit(noRm) {
			file := parseOracle(t, cmd)
			movesCwd := false
			syntax.Walk(file, func(n syntax.Node) bool {
				if x, ok := n.(*syntax.CallExpr); ok && len(x.Args) > 0 {
					first := x.Args[0]
					if !plainWord(first, true) {
						t.Fatalf("Bash(rm:*) denied, %q was approved, whose command name is built when it runs", cmd)
					}
					name := first.Lit() // a leading ~ only names a directory
					if !strings.HasPrefix(name, "~") {
						name, _ = expand.Literal(nil, first)
					}
					switch {
					case path.Base(name) == "rm" || path.Base(name) == "eval":
						t.Fatalf("Bash(rm:*) and Bash(eval:*) denied, %q was approved", cmd)
					case name == "cd" || name == "pushd" || name == "popd" || name == "source" || name == ".":
						movesCwd = true
					}
				}
				return true
			})
			syntax.Walk(file, func(n syntax.Node) bool {
				x, ok := n.(*syntax.Redirect)
				if !ok {
					return true
				}
				target, ok := oracleWrite(x)
				switch {
				case !ok:
				case target == "":
					t.Fatalf("acceptEdits approved %q, which writes a file whose name is only known when it runs", cmd)
				case isStream(target):
				case !strings.HasPrefix(target, "/") && movesCwd:
					t.Fatalf("acceptEdits approved %q, which writes %q after changing directory", cmd, target)
				default:
					abs := target
					if !strings.HasPrefix(abs, "/") {
						abs = path.Join("/ws", abs)
					}
					if !within("/ws", path.Clean(abs)) {
						t.Fatalf("acceptEdits approved %q, which writes %q, outside the workspace", cmd, target)
					}
				}
				return true
			})
		}
	})
}

// parseOracle parses an approved command; an approved command that does
// not parse is itself a failure.
func parseOracle(t *testing.T, cmd string) *syntax.File {
	t.Helper()
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		t.Fatalf("approved %q, which does not parse: %v", cmd, err)
	}
	return file
}

// plainWord reports whether a word is text alone: literals and quotes,
// no expansion of any kind, no glob, and no leading ~ unless tilde.
func plainWord(w *syntax.Word, tilde bool) bool {
	for i, part := range w.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if hasMeta(x.Value) || !tilde && i == 0 && strings.HasPrefix(x.Value, "~") {
				return false
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				return false
			}
		case *syntax.DblQuoted:
			if x.Dollar {
				return false
			}
			for _, q := range x.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// oracleWrite says whether a redirection writes a file and which: "" when
// its name is not plain text. It expands the word with the shell
// package's own expander rather than the analysis'.
func oracleWrite(r *syntax.Redirect) (string, bool) {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll, syntax.RdrAllClob,
		syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut, syntax.DplOut:
	default:
		return "", false
	}
	if !plainWord(r.Word, false) {
		return "", true
	}
	v, err := expand.Literal(nil, r.Word)
	if err != nil || v == "" {
		return "", true
	}
	if r.Op == syntax.DplOut && strings.Trim(strings.TrimSuffix(v, "-"), "0123456789") == "" {
		return "", false // >&2, >&-: descriptors, not files
	}
	return v, true
}
