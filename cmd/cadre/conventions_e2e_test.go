package main

import (
	"debug/buildinfo"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/tmux"
)

// The command line's conventions (issue 25, deliverable 3), through the
// real binary: --version, --help, "did you mean", errors in words, exit
// statuses after signals, numbered progress lines, NO_COLOR and the JSON
// of every --json.

// TestVersionFlagsShowBuildInfo: --version, -v and `cadre version` say the
// same, and what they say is the binary's own build info (the module
// version, the commit), not a constant; a release's -X value wins.
func TestVersionFlagsShowBuildInfo(t *testing.T) {
	e := newEnv(t)
	want := ok(t, e.run("", "version")).stdout
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		if got := ok(t, e.run("", args...)).stdout; got != want {
			t.Errorf("cadre %s printed %q, cadre version %q", args[0], got, want)
		}
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	version := bi.Main.Version
	if version == "" || version == "(devel)" {
		version = "devel"
	}
	if !strings.HasPrefix(want, "cadre "+version) {
		t.Errorf("version line %q does not start with the build info's module version %q", want, version)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" && !strings.Contains(want, rev[:12]) {
		t.Errorf("version line %q lacks the commit %s", want, rev[:12])
	}
	if settings["vcs.modified"] == "true" && !strings.Contains(want, "modified") {
		t.Errorf("version line %q does not say the tree was modified", want)
	}
	if !strings.Contains(want, bi.GoVersion) {
		t.Errorf("version line %q does not name the Go release %s", want, bi.GoVersion)
	}

	// A release build sets the version with -X (.goreleaser.yaml); it wins.
	dir := t.TempDir()
	release := filepath.Join(dir, "cadre")
	build := exec.Command("go", "build", "-o", release, "-ldflags", "-X github.com/cadre-dev/cadre/internal/version.release=v9.8.7", ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build with -X: %v\n%s", err, out)
	}
	e.bin = release
	if got := ok(t, e.run("", "--version")).stdout; !strings.HasPrefix(got, "cadre v9.8.7") {
		t.Errorf("a release build says %q, want the -X version v9.8.7 first", got)
	}
}

// TestHelpHasExamplesEnvironmentAndTUI: --help shows how to start (the
// TUI, -p, a pipe), and every environment variable cadre reads.
func TestHelpHasExamplesEnvironmentAndTUI(t *testing.T) {
	p := ok(t, newEnv(t).run("", "--help"))
	for _, want := range []string{
		"Examples:", "cadre -p", "git diff | cadre -p", "TUI",
		"Environment:", "CADRE_HOME", "CADRE_STORE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
		"OPENAI_API_KEY", "OPENAI_BASE_URL", "CADRE_SERVE_TOKEN", "CADRE_FORK_SUBAGENT", "CADRE_WEBFETCH_ALLOW_PRIVATE",
		"NO_COLOR", "OTEL_EXPORTER_OTLP_ENDPOINT",
	} {
		if !strings.Contains(p.stdout, want) {
			t.Errorf("cadre --help lacks %q", want)
		}
	}
}

// TestDidYouMean: a misspelt model, flag or subcommand flag gets the
// nearest known name.
func TestDidYouMean(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "hi", "--model", "sonet"}, `did you mean "sonnet"?`},
		{[]string{"-p", "hi", "--model", "anthropc:claude-sonnet-5-5"}, `did you mean "anthropic"?`},
		{[]string{"-p", "hi", "--verbse"}, "did you mean --verbose?"},
		{[]string{"-p", "hi", "--max-turn", "3"}, "did you mean --max-turns?"},
		{[]string{"sessions", "--jsn"}, "did you mean --json?"},
		{[]string{"sesions"}, "did you mean cadre sessions?"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			failsWith(t, e.run("", tc.args...), tc.want)
		})
	}
}

// TestBadNumberSaysWhichFlag: a flag's bad value is named with what it
// wants, never in strconv's words.
func TestBadNumberSaysWhichFlag(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-p", "hi", "--max-turns", "x"}, []string{`--max-turns "x"`, "a whole number"}},
		{[]string{"-p", "hi", "--max-budget-usd", "lots"}, []string{`--max-budget-usd "lots"`, "a number"}},
		{[]string{"sessions", "--limit", "ten"}, []string{`--limit "ten"`, "a whole number"}},
		{[]string{"-p", "hi", "--continue=maybe"}, []string{`--continue "maybe"`, "true or false"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			p := e.run("", tc.args...)
			failsWith(t, p, tc.want...)
			if strings.Contains(p.stderr, "strconv") || strings.Contains(p.stderr, "invalid syntax") {
				t.Errorf("stderr shows Go's parser: %q", p.stderr)
			}
		})
	}
}

// asNobody runs cmd as an unprivileged user when the test runs as root,
// for whom no directory is read-only.
func asNobody(t *testing.T, cmd *exec.Cmd, dirs ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	// The unprivileged user reaches the binary and the test's directories.
	for _, d := range append(dirs, filepath.Dir(bin)) {
		for ; d != "/" && d != "."; d = filepath.Dir(d) {
			st, err := os.Stat(d)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm()&0o005 != 0o005 {
				if err := os.Chmod(d, st.Mode().Perm()|0o005); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

// TestReadOnlyHome: a CADRE_HOME cadre cannot write is said in words
// (not SQLite's "(14)"), and --no-session-persistence runs there, writing
// nothing.
func TestReadOnlyHome(t *testing.T) {
	e := newEnv(t)
	e.write("s.yaml", "agents:\n  main:\n    - text: \"hello from a read-only home\"\n")
	if err := os.Chmod(e.home, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(e.home, 0o755) })
	home := strings.TrimPrefix(e.vars[1], "HOME=")
	if err := os.Chmod(home, 0o777); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) proc {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = e.dir, e.vars
		asNobody(t, cmd, e.dir, e.home, home)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			if _, ok := err.(*exec.ExitError); !ok {
				t.Fatal(err)
			}
		}
		return proc{stdout: out.String(), stderr: errb.String(), code: cmd.ProcessState.ExitCode()}
	}
	p := run("-p", "hi", "--model", "script:s.yaml")
	failsWith(t, p, e.home, "not writable", "--no-session-persistence")
	if strings.Contains(p.stderr, "(14)") || strings.Contains(p.stderr, "unable to open database file") {
		t.Errorf("stderr shows SQLite's own words: %q", p.stderr)
	}
	p = run("-p", "hi", "--model", "script:s.yaml", "--no-session-persistence")
	if p.code != 0 || p.stdout != "hello from a read-only home\n" {
		t.Fatalf("--no-session-persistence on a read-only home: exit %d\nstdout %q\nstderr %q", p.code, p.stdout, p.stderr)
	}
	if entries, err := os.ReadDir(e.home); err != nil || len(entries) != 0 {
		t.Errorf("CADRE_HOME holds %v (%v), want nothing", entries, err)
	}
}

// TestSignalExitStatus: SIGINT exits 130 and SIGTERM 143, as a shell
// reports a process a signal ended, after the run was stopped cleanly: its
// result line written and its session recorded killed.
func TestSignalExitStatus(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
		says string
	}{
		{syscall.SIGINT, 130, "interrupt"},
		{syscall.SIGTERM, 143, "terminated"},
	} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			h, arrived := counting(func(int, testkit.Request) testkit.Reply {
				return testkit.Reply{Text: "never sent", Wait: make(chan struct{})}
			})
			e, _ := anthropicEnv(t, h)
			r := e.start("-p", "take your time", "--model", sonnet, "--output-format", "stream-json")
			waitRequest(t, arrived, 1)
			if err := r.cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			p := r.wait(t, 10*time.Second)
			if p.code != tc.code {
				t.Errorf("exit %d after %v, want %d", p.code, tc.sig, tc.code)
			}
			ls := lines(t, p.stdout)
			if res := ls[len(ls)-1]; res["type"] != "result" || res["is_error"] != true || !strings.Contains(fmt.Sprint(res["errors"]), tc.says) {
				t.Errorf("last line %v, want an is_error result saying %q", res, tc.says)
			}
			if infos := listSessions(t, e); len(infos) != 1 || infos[0].Status != session.StatusKilled {
				t.Errorf("sessions after %v: %+v, want one killed session", tc.sig, infos)
			}
		})
	}
}

// fanOut is a scenario whose main agent starts three subagents of one type
// in one turn.
func fanOut(agent string) string {
	return `agents:
  main:
    - tool_use:
        - {name: Agent, input: {description: first look, prompt: one, subagent_type: ` + agent + `}}
        - {name: Agent, input: {description: second look, prompt: two, subagent_type: ` + agent + `}}
        - {name: Agent, input: {description: third look, prompt: three, subagent_type: ` + agent + `}}
    - text: All three looked.
  "*":
    - text: "Done: {{.Prompt}}"
`
}

// TestProgressNumbersRunsOfOneType: -p's progress lines tell same-type
// subagents apart by a number that follows the order of the calls, the
// same on every line of a run.
func TestProgressNumbersRunsOfOneType(t *testing.T) {
	e := newEnv(t)
	e.write("fan.yaml", fanOut("general-purpose"))
	p := ok(t, e.run("", "-p", "look three times", "--model", "script:fan.yaml"))
	if p.stdout != "All three looked.\n" {
		t.Errorf("stdout %q", p.stdout)
	}
	for _, want := range []string{
		"[general-purpose] started: first look\n",
		"[general-purpose #2] started: second look\n",
		"[general-purpose #3] started: third look\n",
	} {
		if !strings.Contains(p.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, p.stderr)
		}
	}
	var done []string
	for _, l := range strings.Split(p.stderr, "\n") {
		if i := strings.Index(l, "] done in "); i >= 0 {
			done = append(done, l[:i+1])
		}
	}
	sort.Strings(done)
	if want := []string{"[general-purpose #2]", "[general-purpose #3]", "[general-purpose]"}; fmt.Sprint(done) != fmt.Sprint(want) {
		t.Errorf("done lines %q, want one for each of %q:\n%s", done, want, p.stderr)
	}
}

// sgr matches a Select Graphic Rendition sequence.
var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// coloured reports whether screen sets a colour, foreground or background
// (30–38, 40–48, 90–97, 100–107); 39 and 49 go back to the default, and
// bold, dim or reverse are no colour.
func coloured(screen string) bool {
	for _, m := range sgr.FindAllStringSubmatch(screen, -1) {
		for _, p := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' }) {
			// 38;5;N and 38;2;R;G;B are caught at their 38.
			if n, _ := strconv.Atoi(p); n >= 30 && n <= 38 || n >= 40 && n <= 48 || n >= 90 && n <= 97 || n >= 100 && n <= 107 {
				return true
			}
		}
	}
	return false
}

// TestNoColor: on a terminal, -p's progress shows an agent's colour,
// unless NO_COLOR is set.
func TestNoColor(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noColor bool
	}{{"colour", false}, {"NO_COLOR", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write(".claude/agents/painter.md", "---\nname: painter\ndescription: Paints.\ncolor: red\n---\nYou paint.\n")
			e.write("fan.yaml", fanOut("painter"))
			if tc.noColor {
				e.set("NO_COLOR=1")
			}
			s := tmux.Start(t, tmux.Options{Dir: e.dir, Env: e.vars}, bin, "-p", "paint", "--model", "script:fan.yaml", "--trust-workspace")
			if code := s.WaitExit(60 * time.Second); code != 0 {
				t.Fatalf("exit %d:\n%s", code, s.Capture())
			}
			screen := s.CaptureStyled()
			if !strings.Contains(screen, "All three looked.") || !strings.Contains(screen, "painter") {
				t.Fatalf("the run did not show its progress and answer:\n%s", screen)
			}
			if got := coloured(screen); got == tc.noColor {
				t.Errorf("colour shown = %v with NO_COLOR=%v:\n%q", got, tc.noColor, screen)
			}
		})
	}
}

// TestNoColorTUI: the TUI, which colours its frame, shows no colour with
// NO_COLOR set.
func TestNoColorTUI(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noColor bool
	}{{"colour", false}, {"NO_COLOR", true}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.write("hi.yaml", "agents:\n  main:\n    - text: \"hello **there**\"\n")
			if tc.noColor {
				e.set("NO_COLOR=1")
			}
			s := tmux.Start(t, tmux.Options{Dir: e.dir, Env: e.vars}, bin, "--model", "script:hi.yaml")
			s.WaitFor(inputHint, screenWait)
			ask(s, "hi")
			s.WaitFor("hello", screenWait)
			if got := coloured(s.CaptureStyled()); got == tc.noColor {
				t.Errorf("colour shown = %v with NO_COLOR=%v:\n%q", got, tc.noColor, s.CaptureStyled())
			}
		})
	}
}

// snakeKeys reports every object key in v that is not snake_case, with its
// path.
func snakeKeys(v any, path string, bad *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if !regexp.MustCompile(`^[a-z0-9]+(_[a-z0-9]+)*$`).MatchString(k) {
				*bad = append(*bad, path+"."+k)
			}
			snakeKeys(x, path+"."+k, bad)
		}
	case []any:
		for _, x := range v {
			snakeKeys(x, path+"[]", bad)
		}
	}
}

// TestJSONIsSnakeCase: every --json writes snake_case keys, as the HTTP
// API does, and a session reads the same from both.
func TestJSONIsSnakeCase(t *testing.T) {
	e := newEnv(t)
	e.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews.\ndisallowedTools: Bash\n---\nYou review.\n")
	e.write("bg.yaml", `agents:
  main:
    - tool_use:
        - {name: Agent, input: {description: background look, prompt: look, subagent_type: reviewer, run_in_background: true}}
    - text: Launched.
    - text: Noted.
    - text: Noted again.
  "*":
    - text: "Looked."
`)
	p := ok(t, e.run("", "-p", "look in the background", "--model", "script:bg.yaml", "--output-format", "stream-json", "--verbose", "--trust-workspace"))
	sid := sessionID(t, p)
	tasks := ok(t, e.run("", "tasks", "--json")).stdout
	var ts []map[string]any
	if err := json.Unmarshal([]byte(tasks), &ts); err != nil || len(ts) != 1 {
		t.Fatalf("tasks --json: %v\n%s", err, tasks)
	}
	for _, args := range [][]string{
		{"sessions", "--json"},
		{"sessions", "show", sid, "--json"},
		{"tasks", "--json"},
		{"tasks", "show", fmt.Sprint(ts[0]["id"]), "--json"},
		{"agents", "--json"},
		{"agents", "show", "reviewer", "--json"},
		{"mcp", "list", "--json"},
	} {
		out := ok(t, e.run("", args...)).stdout
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
			continue
		}
		var bad []string
		snakeKeys(v, "", &bad)
		if len(bad) > 0 {
			sort.Strings(bad)
			t.Errorf("cadre %s: keys not in snake_case: %v", strings.Join(args, " "), bad)
		}
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(ok(t, e.run("", "sessions", "--json")).stdout), &list); err != nil || len(list) == 0 {
		t.Fatalf("sessions --json: %v", err)
	}
	for _, k := range []string{"id", "parent_id", "status", "num_turns", "cost_usd", "transcript_path", "tokens"} {
		found := false
		for _, s := range list {
			_, ok := s[k]
			found = found || ok
		}
		if !found {
			t.Errorf("sessions --json lacks the HTTP API's %q: %v", k, list)
		}
	}
}
