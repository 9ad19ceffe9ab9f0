package permission

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// bashCase is one Bash call and what Permit must make of it.
type bashCase struct {
	name             string
	mode             Mode
	allow, ask, deny string
	cmd              string
	want             string // allow, ask or deny (see decide)
}

// bashRedirectCases: a redirection that writes needs what an Edit of its
// target needs, whatever rule approves the command.
func bashRedirectCases() []bashCase {
	const echo = "Bash(echo:*)"
	return []bashCase{
		// The attack: an allowed command writing outside the workspace.
		{name: "> outside", allow: echo, cmd: "echo x > /outside", want: "ask"},
		{name: ">> outside", allow: echo, cmd: "echo x >> /outside", want: "ask"},
		{name: ">| outside", allow: echo, cmd: "echo x >| /outside", want: "ask"},
		{name: "&> outside", allow: echo, cmd: "echo x &> /outside", want: "ask"},
		{name: "&>> outside", allow: echo, cmd: "echo x &>> /outside", want: "ask"},
		{name: "2> outside", allow: echo, cmd: "echo x 2> /outside", want: "ask"},
		{name: "N> outside", allow: echo, cmd: "echo x 7>/outside", want: "ask"},
		{name: ">& file", allow: echo, cmd: "echo x >& /outside", want: "ask"},
		{name: ">&file attached", allow: echo, cmd: "echo x >&/outside", want: "ask"},
		{name: "<> creates", allow: echo, cmd: "echo x <> /outside", want: "ask"},
		{name: "relative escape", mode: ModeAcceptEdits, allow: echo, cmd: "echo x > ../outside.txt", want: "ask"},
		{name: "second of two", mode: ModeAcceptEdits, allow: echo, cmd: "echo a > a.txt; echo b > /etc/x", want: "ask"},
		{name: "in a compound", mode: ModeAcceptEdits, allow: echo, cmd: "{ echo x; } > /etc/x", want: "ask"},
		{name: "in a function", mode: ModeAcceptEdits, allow: echo, cmd: "f() { echo x > /etc/x; }", want: "ask"},
		{name: "home", mode: ModeAcceptEdits, allow: echo, cmd: "echo x >> ~/.bashrc", want: "ask"},
		{name: "quoted", mode: ModeAcceptEdits, allow: echo, cmd: `echo x > "/etc/x"`, want: "ask"},
		{name: "escaped", mode: ModeAcceptEdits, allow: echo, cmd: `echo x > \/etc/x`, want: "ask"},
		// Inside the workspace: as an edit is.
		{name: "inside, default mode", allow: echo, cmd: "echo x > out.txt", want: "ask"},
		{name: "inside, acceptEdits", mode: ModeAcceptEdits, allow: echo, cmd: "echo x > out.txt", want: "allow"},
		{name: "inside by absolute path", mode: ModeAcceptEdits, allow: echo, cmd: "echo x >> /ws/sub/log 2>&1", want: "allow"},
		{name: "a quoted ~ is a directory named ~", mode: ModeAcceptEdits, allow: echo, cmd: `echo x > "~/x"`, want: "allow"},
		{name: "Edit allow rule", allow: echo + " Edit(/out/**)", cmd: "echo x > out/a.txt", want: "allow"},
		{name: "bare Bash allow, default mode", allow: "Bash", cmd: "make > build.log", want: "ask"},
		{name: "bare Bash allow, acceptEdits", mode: ModeAcceptEdits, allow: "Bash", cmd: "make > build.log", want: "allow"},
		// Targets that cannot be read need approval.
		{name: "variable", mode: ModeAcceptEdits, allow: echo, cmd: "echo x > $f", want: "ask"},
		{name: "variable in quotes", mode: ModeAcceptEdits, allow: echo, cmd: `echo x > "$HOME/x"`, want: "ask"},
		{name: "glob", mode: ModeAcceptEdits, allow: echo, cmd: "echo x > /e*c/passwd", want: "ask"},
		{name: "~user", mode: ModeAcceptEdits, allow: echo, cmd: "echo x > ~root/x", want: "ask"},
		{name: "after cd", mode: ModeAcceptEdits, allow: echo + " Bash(cd:*)", cmd: "cd / && echo x > etc/passwd", want: "ask"},
		{name: "after source", mode: ModeAcceptEdits, allow: echo + " Bash(source:*)", cmd: "source x.sh; echo x > etc/passwd", want: "ask"},
		{name: "cd in a subshell", mode: ModeAcceptEdits, allow: "Bash", cmd: "(cd /etc && echo x > passwd)", want: "ask"},
		// Not file writes.
		{name: "/dev/null", allow: echo, cmd: "echo x > /dev/null 2>/dev/null", want: "allow"},
		{name: "std streams", allow: echo, cmd: "echo x >/dev/stdout 2>>/dev/stderr 3>/dev/fd/2", want: "allow"},
		{name: "fd duplication", allow: echo, cmd: "echo x 2>&1 >&2 3>&- 4>&2-", want: "allow"},
		// Found by FuzzBashCommand: an empty word names no descriptor.
		{name: "dup to an empty word is no descriptor", mode: ModeAcceptEdits, allow: echo, cmd: `echo x >&""`, want: "ask"},
		{name: "input", allow: echo, cmd: "echo x < /etc/hosts", want: "allow"},
		{name: "here-doc", allow: "Bash(cat:*)", cmd: "cat <<EOF\nhi\nEOF", want: "allow"},
		// Writes in scripts the command runs are writes too.
		{name: "sh -c", mode: ModeAcceptEdits, allow: "Bash", cmd: "sh -c 'echo x > /etc/x'", want: "ask"},
		{name: "eval", mode: ModeAcceptEdits, allow: "Bash", cmd: "eval 'echo x > /etc/x'", want: "ask"},
		{name: "time -o", mode: ModeAcceptEdits, allow: "Bash", cmd: "command time -o /etc/x ls", want: "ask"},
		// Edit deny rules and plan mode deny.
		{name: "Edit deny", mode: ModeAcceptEdits, allow: "Bash", deny: "Edit(//etc/**)", cmd: "echo x > /etc/x", want: "deny"},
		{name: "Edit deny in bypass", mode: ModeBypass, deny: "Edit(//etc/**)", cmd: "echo x > /etc/x", want: "deny"},
		{name: "Write deny", mode: ModeAcceptEdits, allow: "Bash", deny: "Write(/gen/**)", cmd: "echo x > gen/a", want: "deny"},
		{name: "Edit deny inside", mode: ModeAcceptEdits, allow: "Bash", deny: "Edit(*.lock)", cmd: "echo x > a/go.lock", want: "deny"},
		{name: "plan", mode: ModePlan, allow: "Bash", cmd: "echo x > out.txt", want: "deny"},
		{name: "Edit ask", mode: ModeAcceptEdits, allow: "Bash", ask: "Edit(/go.mod)", cmd: "echo x >> go.mod", want: "ask"},
		// bypassPermissions: a write is only held back by an Edit deny.
		{name: "bypass", mode: ModeBypass, cmd: "echo x > /etc/x", want: "allow"},
		{name: "bypass, unknown target", mode: ModeBypass, cmd: "echo x > $f", want: "allow"},
		{name: "bypass, unknown target, Edit deny", mode: ModeBypass, deny: "Edit(//etc/**)", cmd: "echo x > $f", want: "ask"},
	}
}

// bashDenyCases: deny rules look through paths, wrappers and scripts;
// what cannot be read asks; other commands are not caught by mistake.
func bashDenyCases() []bashCase {
	var out []bashCase
	denied := []string{
		// executable paths
		"/bin/rm f", "/usr/bin/rm -rf f", "./rm f", "~/bin/rm f",
		// wrappers
		"command rm f", "command -p rm f", "builtin rm f", "exec rm f", "exec -a x rm f",
		"env rm f", "/usr/bin/env rm f", "env -i FOO=1 BAR='a b' rm f", "env -u HOME -C /tmp rm f",
		"env --unset=HOME --chdir /tmp -- rm f", "env - rm f",
		"nice rm f", "nice -n 5 rm f", "nice -n5 rm f", "nice -5 rm f", "nice --adjustment=5 rm f",
		"nohup rm f", "nohup -- rm f",
		"timeout 5 rm f", "timeout -s KILL -k 1 5s rm f", "timeout --signal=TERM --foreground 5 rm f",
		"xargs rm", "xargs -0 -n1 rm", "xargs -I{} rm {}", "xargs -i rm {}", "xargs --max-args=1 -P 4 rm",
		"time rm f", "time -p rm f", "command time -p -o /dev/null rm f", "stdbuf -oL -e 0 rm f",
		"setsid -f rm f", "sudo rm f", "sudo -u root -E rm f", "sudo -n --user=root HOME=/ rm f",
		"doas -u root rm f", "busybox rm f", "busybox sh -c 'rm f'", "command env nice -n 1 timeout 9 rm f",
		// shells
		"sh -c 'rm f'", `bash -c "rm f"`, "bash -lc 'rm f'", "bash -e -o pipefail -c 'rm f'", "zsh -c 'rm f'",
		"dash -c 'rm f'", `sh -c "sh -c 'rm f'"`, "/bin/sh -c 'cd x && rm f'", "xargs sh -c 'rm \"$@\"' _",
		"env -S 'rm f'",
		// eval, with text it can read
		"eval rm f", "eval 'rm f'", `eval "rm f"`, "trap 'rm f' EXIT", "trap -- 'rm f' EXIT",
		// quoting and assignments
		`r\m f`, `"rm" f`, "'r'm f", "FOO=1 rm f", `"/bin/rm" f`,
		// structure
		"true && rm f", "ls | rm f", "rm f &", "! rm f", "(rm f)", "{ rm f; }", "echo $(rm f)", "echo `rm f`",
		"cat <(rm f)", "if true; then rm f; fi", "for i in 1; do rm f; done", "f() { rm \"$@\"; }", "x=$(rm f)",
		"cat <<EOF\n$(rm f)\nEOF",
		// a parse error: the lines before it still run
		"rm f\nif (",
	}
	for _, cmd := range denied {
		out = append(out, bashCase{name: cmd, allow: "Bash", deny: "Bash(rm:*)", cmd: cmd, want: "deny"})
	}
	asked := []string{
		"eval \"$x\"", "eval $(cat f)", "$x f", "${x} f", "\"$x\" f", "$(echo rm) f", "`echo rm` f",
		"sh -c \"$x\"", "bash -c \"$(cat s)\"", "echo 'rm f' | sh", "echo 'rm f' | bash -s", "cat s | zsh",
		"echo rm | xargs sh -c", "ls | xargs -I{} {} f", "echo rm | xargs env",
		"xargs -I% sh -c %", "alias r=rm", `trap "$x" EXIT`, "$'rm' f", "/bin/r? f", "{rm,f}", "env \"$x\" f",
		"echo (", "sh -c 'echo ('",
		// issue 22: scripts no rule reads, and programs that run a command
		// given to them, ask while a deny rule exists.
		"bash script.sh", "source env.sh", "sh /dev/stdin <<< 'rm f'", ". /dev/stdin <<< 'rm f'", "source <(echo rm f)",
		"bash <(echo rm f)", "python3 -c 'import shutil'", "perl -e 'unlink q(f)'", "node script.js",
		"ionice -c3 rm f", "chrt 10 rm f", "taskset -c 0 rm f", "setpriv --reuid=0 rm f", "script -qc 'rm f'",
		"hash -p /bin/rm ls; ls f", "unknowntool --run rm f",
	}
	for _, cmd := range asked {
		out = append(out, bashCase{name: cmd, allow: "Bash", deny: "Bash(rm:*)", cmd: cmd, want: "ask"})
	}
	allowed := []string{
		"echo rm f", "git rm f", "ls rm", "grep -r 'rm f' .", "echo 'rm f; rm g'", "command -v rm", "type rm",
		"timeout 5 echo rm", "sudo -l rm f", "nice -n 5 make rm",
		"xargs echo rm", "echo rm f | xargs", "sh -c 'echo rm'", "eval echo rm", "env FOO=rm make", "f=rm", "trap - EXIT",
	}
	for _, cmd := range allowed {
		want := "allow"
		if strings.HasPrefix(cmd, "eval ") {
			want = "ask" // eval is never approved, though rm is not run
		}
		out = append(out, bashCase{name: cmd, allow: "Bash", deny: "Bash(rm:*)", cmd: cmd, want: want})
	}
	return append(out,
		// The deny rule must not be slipped past even in bypassPermissions.
		bashCase{name: "bypass: through a path", mode: ModeBypass, deny: "Bash(rm:*)", cmd: "/bin/rm f", want: "deny"},
		bashCase{name: "bypass: eval asks", mode: ModeBypass, deny: "Bash(rm:*)", cmd: `eval "$x"`, want: "ask"},
		bashCase{name: "bypass: eval, no deny rule", mode: ModeBypass, cmd: `eval "$x"`, want: "allow"},
		bashCase{name: "bypass: a script asks while a deny rule exists", mode: ModeBypass, deny: "Bash(rm:*)", cmd: "sh /dev/stdin <<< 'rm f'", want: "ask"},
		bashCase{name: "bypass: ionice asks", mode: ModeBypass, deny: "Bash(rm:*)", cmd: "ionice rm f", want: "ask"},
		bashCase{name: "a script, no deny or ask rule", allow: "Bash", cmd: "bash script.sh", want: "allow"},
		bashCase{name: "ask rule, a script", allow: "Bash", ask: "Bash(git push:*)", cmd: "bash deploy.sh", want: "ask"},
		// Ask rules look through the same way.
		bashCase{name: "ask rule through env", allow: "Bash", ask: "Bash(git push:*)", cmd: "env GIT_DIR=x git push", want: "ask"},
		bashCase{name: "ask rule, eval", allow: "Bash", ask: "Bash(git push:*)", cmd: `eval "$x"`, want: "ask"},
		bashCase{name: "ask rule through sh -c", allow: "Bash", ask: "Bash(git push:*)", cmd: "sh -c 'git push'", want: "ask"},
		bashCase{name: "ask rule, other command", allow: "Bash", ask: "Bash(git push:*)", cmd: "sh -c 'git status'", want: "allow"},
	)
}

// bashAllowCases: allow rules never approve what cannot be read.
func bashAllowCases() []bashCase {
	return []bashCase{
		{name: "eval rule", allow: "Bash(eval:*)", cmd: "eval echo hi", want: "ask"},
		{name: "bare Bash, eval", allow: "Bash", cmd: `eval "$x"`, want: "ask"},
		{name: "sh rule, dynamic script", allow: "Bash(sh:*)", cmd: `sh -c "$x"`, want: "ask"},
		{name: "sh rule, static script", allow: "Bash(sh -c:*)", cmd: "sh -c 'ls'", want: "allow"},
		{name: "echo rule, $cmd", allow: "Bash(echo:*)", cmd: "$x", want: "ask"},
		{name: "wildcard rule, $cmd", allow: "Bash(* --version)", cmd: "$x --version", want: "ask"},
		{name: "echo rule, echo $x", allow: "Bash(echo:*)", cmd: "echo $x", want: "allow"},
		{name: "echo rule, arithmetic", allow: "Bash(echo:*)", cmd: "echo $((1+2))", want: "ask"},
		{name: "parse error", allow: "Bash", cmd: "echo (", want: "ask"},
		{name: "every part", allow: "Bash(echo:*) Bash(ls:*)", cmd: "ls && echo ok || echo no", want: "allow"},
		{name: "a part with no rule", allow: "Bash(echo:*)", cmd: "echo ok; rm -rf x", want: "ask"},
		{name: "wrapper is the command", allow: "Bash(echo:*)", cmd: "env rm x", want: "ask"},
		{name: "exact rule ignores fd dup", allow: "Bash(npm test)", cmd: "npm test 2>&1", want: "allow"},
		{name: "loop body", allow: "Bash(echo:*)", cmd: "for f in a b; do echo $f; done", want: "allow"},
		{name: "test clause needs a rule", allow: "Bash(echo:*)", cmd: "[[ -f x ]] && echo y", want: "ask"},
		{name: "assignment needs a rule", allow: "Bash(ls:*)", cmd: "PATH=/tmp/evil ls", want: "ask"},
	}
}

func TestBashRules(t *testing.T) {
	for group, cases := range map[string][]bashCase{
		"redirect": bashRedirectCases(),
		"deny":     bashDenyCases(),
		"allow":    bashAllowCases(),
	} {
		for _, tc := range cases {
			t.Run(group+"/"+tc.name, func(t *testing.T) {
				p := Policy{Mode: tc.mode, Workspace: "/ws", Home: "/home/u", Rules: mustRules(t, tc.allow, tc.ask, tc.deny)}
				if got := decide(t, p, "Bash", tc.cmd); got != tc.want {
					a := &asker{}
					p.Asker = a
					err := p.Permit(context.Background(), "Bash", tools["Bash"], env, input("Bash", tc.cmd))
					t.Errorf("%q (mode %q, allow %q, ask %q, deny %q): got %s, want %s (%v)",
						tc.cmd, tc.mode, tc.allow, tc.ask, tc.deny, got, tc.want, err)
				}
			})
		}
	}
}

// TestBashDenialText: what the model reads says what was wrong.
func TestBashDenialText(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		cmd  string
		want []string
	}{
		{
			p:    Policy{Workspace: "/ws", Rules: mustRules(t, "Bash(echo:*)", "", "")},
			cmd:  "echo x > ../outside.txt",
			want: []string{"the command is allowed, but it writes /outside.txt (>)", "nobody can approve it"},
		},
		{
			p:    Policy{Workspace: "/ws", Rules: mustRules(t, "Bash", "", "Edit(//etc/**)")},
			cmd:  "echo x 2>> /etc/x",
			want: []string{`denied by rule "Edit(//etc/**)"`, "writes /etc/x (2>>)"},
		},
		{
			p:    Policy{Workspace: "/ws", Rules: mustRules(t, "Bash", "", "Bash(rm:*)")},
			cmd:  "sh -c 'rm f'",
			want: []string{`denied by rule "Bash(rm:*)"`},
		},
		{
			p:    Policy{Workspace: "/ws", Rules: mustRules(t, "Bash", "", "Bash(rm:*)")},
			cmd:  `eval "$x"`,
			want: []string{"eval runs text", `the deny rule "Bash(rm:*)" cannot be checked`},
		},
		{
			p:    Policy{Mode: ModeAcceptEdits, Workspace: "/ws", Rules: mustRules(t, "Bash(echo:*)", "", "")},
			cmd:  "echo x > $out",
			want: []string{"cannot be read before it runs", "> $out"},
		},
	} {
		err := tc.p.Permit(context.Background(), "Bash", tools["Bash"], env, input("Bash", tc.cmd))
		var d *Denied
		if !errors.As(err, &d) {
			t.Errorf("%q: got %v, want a denial", tc.cmd, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: denial %q lacks %q", tc.cmd, err.Error(), w)
			}
		}
	}
}

// Under autoAllowBashIfSandboxed a command the sandbox holds runs unasked,
// unless a deny or ask rule names it; one it does not hold still asks.
func TestBashAutoAllowSandboxed(t *testing.T) {
	notDocker := func(cmd string) bool { return !strings.HasPrefix(cmd, "docker") }
	for _, tc := range []struct {
		name, cmd, ask, deny string
		mode                 Mode
		sandboxed            func(string) bool
		want                 string
	}{
		{name: "sandboxed", cmd: "make test", sandboxed: notDocker, want: "allow"},
		{name: "acceptEdits", cmd: "make test", mode: ModeAcceptEdits, sandboxed: notDocker, want: "allow"},
		{name: "no sandbox", cmd: "make test", want: "ask"},
		{name: "excluded command", cmd: "docker run x", sandboxed: notDocker, want: "ask"},
		{name: "ask rule names it", cmd: "git push origin", ask: "Bash(git push:*)", sandboxed: notDocker, want: "ask"},
		{name: "deny rule names it", cmd: "rm -rf x", deny: "Bash(rm:*)", sandboxed: notDocker, want: "deny"},
		{name: "deny rule, unreadable", cmd: `eval "$x"`, deny: "Bash(rm:*)", sandboxed: notDocker, want: "ask"},
		{name: "unreadable, no rules", cmd: `eval "$x"`, sandboxed: notDocker, want: "allow"},
		{name: "write inside", cmd: "echo x > /ws/out.txt", sandboxed: notDocker, want: "allow"},
		{name: "write outside is the sandbox's", cmd: "echo x > /etc/passwd", sandboxed: notDocker, want: "allow"},
		{name: "ask rule names the write", cmd: "echo x > /ws/secret.txt", ask: "Edit(//ws/secret.txt)", sandboxed: notDocker, want: "ask"},
		{name: "deny rule names the write", cmd: "echo x > /ws/secret.txt", deny: "Edit(//ws/secret.txt)", sandboxed: notDocker, want: "deny"},
		{name: "write target unreadable", cmd: "echo x > $out", sandboxed: notDocker, want: "ask"},
		{name: "plan", cmd: "ls", mode: ModePlan, sandboxed: notDocker, want: "deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Mode: tc.mode, Workspace: "/ws", Home: "/home/u", Rules: mustRules(t, "", tc.ask, tc.deny), Sandboxed: tc.sandboxed}
			if got := decide(t, p, "Bash", tc.cmd); got != tc.want {
				t.Errorf("%q: got %s, want %s", tc.cmd, got, tc.want)
			}
		})
	}
}
