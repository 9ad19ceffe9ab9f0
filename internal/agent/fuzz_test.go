package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
)

// fuzzFormats are the four formats of outside input, picked by the fuzz
// input's first argument: the three markdown layouts of a project's agent
// directories and an entry of the settings' "agents" object.
var fuzzFormats = []Format{FormatClaude, FormatOpenCode, FormatHarness, FormatJSON}

// FuzzAgentFile feeds agent definitions in every format to the parser
// that reads them from a project (which is outside input: a cloned
// repository chooses its files). Beyond not panicking: parsing is quick,
// every problem names the file and a line inside it, no message repeats
// more than an excerpt of the file, a definition without problems is
// valid, and parsing twice gives the same result.
func FuzzAgentFile(f *testing.F) {
	for _, name := range []string{"claude/code-reviewer.md", "claude/test-runner.md", "opencode/careful.md", "opencode/review.md", "harness/reviewer.md"} {
		data, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
		if err != nil {
			f.Fatal(err)
		}
		for i := range fuzzFormats {
			f.Add(byte(i), data)
		}
	}
	for _, s := range fuzzcheck.Literals(f, func(s string) bool { return strings.HasPrefix(s, "---") }) {
		for i := range 3 {
			f.Add(byte(i), []byte(s))
		}
	}
	for _, s := range fuzzcheck.Literals(f, func(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "{") }) {
		f.Add(byte(3), []byte(s))
	}

	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		format := fuzzFormats[int(which)%len(fuzzFormats)]
		parse := func() ([]Entry, []Problem) {
			var entries []Entry
			var problems []Problem
			fuzzcheck.Timed(t, len(data), func() {
				entries, problems = parseAgentInput(format, data)
			})
			return entries, problems
		}
		entries, problems := parse()
		checkAgentOutput(t, format, data, entries, problems)

		again, againProblems := parse()
		if !reflect.DeepEqual(entries, again) || !reflect.DeepEqual(problems, againProblems) {
			t.Errorf("parsing twice differs:\n%+v\n%+v\nproblems %v\n%v", entries, again, problems, againProblems)
		}
	})
}

// fuzzPath is where a fuzzed markdown file claims to live: a project
// directory that does not exist, so {file:…} references to relative paths
// find nothing.
var fuzzPath = filepath.Join(string(filepath.Separator), "fuzz-project-that-does-not-exist", "agents", "fuzzed.md")

const fuzzSettingsFile = "/fuzz/settings.json"

// parseAgentInput runs the loader's own path for one input: a markdown
// file of a project directory, or the settings' agents object.
func parseAgentInput(format Format, data []byte) ([]Entry, []Problem) {
	l := &loader{}
	if format == FormatJSON {
		l.settings(data, fuzzSettingsFile)
	} else if d, problems, skip := parseFile(fuzzPath, data, format, SourceProject, filepath.Dir(fuzzPath)); !skip {
		l.add(d, problems)
	}
	return l.entries, l.problems
}

func checkAgentOutput(t *testing.T, format Format, data []byte, entries []Entry, problems []Problem) {
	t.Helper()
	input := string(data)
	file, lines := fuzzPath, fuzzcheck.Lines(data)
	if format == FormatJSON {
		file, lines = fuzzSettingsFile, 0
	}
	for _, p := range problems {
		text := p.Error()
		if p.Path != file || !strings.HasPrefix(text, file+":") {
			t.Errorf("problem %q does not name the file %s", text, file)
		}
		if p.Line < 0 || p.Line > lines {
			t.Errorf("problem %q is on line %d of a file of %d lines", text, p.Line, lines)
		}
		fuzzcheck.NoEcho(t, "problem", input, text)
	}
	for _, e := range entries {
		d := e.Definition
		for _, w := range d.Warnings {
			if !strings.HasPrefix(w, file+":") {
				t.Errorf("warning %q does not name the file %s", w, file)
			}
			fuzzcheck.NoEcho(t, "warning", input, w)
		}
		if e.Err != nil {
			fuzzcheck.NoEcho(t, "error", input, e.Err.Error())
			continue
		}
		if err := ValidateName(d.Name); err != nil || d.Name != foldName(d.Name) {
			t.Errorf("valid definition has name %q (%v)", d.Name, err)
		}
		if d.Description == "" {
			t.Errorf("valid definition %q has no description", d.Name)
		}
		if d.Format != format {
			t.Errorf("definition %q has format %q, want %q", d.Name, d.Format, format)
		}
		if d.PermissionMode != "" {
			if _, err := checkPermissionMode(d.PermissionMode); err != nil {
				t.Errorf("valid definition %q: %v", d.Name, err)
			}
		}
		if d.MaxTurns < 0 {
			t.Errorf("valid definition %q has MaxTurns %d", d.Name, d.MaxTurns)
		}
		if d.URL != "" && (d.Prompt != "" || d.Workspace != nil && d.Workspace.Path != "") {
			t.Errorf("valid definition %q is remote and has a prompt or workspace path: %+v", d.Name, d)
		}
		for _, r := range d.TaskRules {
			if _, err := checkAction(r.Action); err != nil || strings.TrimSpace(r.Pattern) == "" {
				t.Errorf("valid definition %q has task rule %+v", d.Name, r)
			}
		}
	}
}
