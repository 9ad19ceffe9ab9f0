package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/internal/testkit/npm"
	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

// applyHunks applies a structuredPatch to old, checking every context and
// removed line: a patch that does not turn old into new is wrong whatever
// it looks like.
func applyHunks(t *testing.T, old string, hunks []Hunk) string {
	t.Helper()
	lines := splitKeep(old)
	var out []string
	at := 0 // next line of old, 0-based
	for _, h := range hunks {
		start := h.OldStart - 1 // an empty side names the line after the change too
		if start < at || start > len(lines) {
			t.Fatalf("hunk %+v starts at %d; already at %d of %d lines", h, start, at, len(lines))
		}
		out = append(out, lines[at:start]...)
		at = start
		if got := len(out); got+1 != h.NewStart && !(h.NewLines == 0 && got == h.NewStart-1) {
			t.Errorf("hunk %+v: new side starts at line %d", h, got+1)
		}
		for i, l := range h.Lines {
			noNL := i+1 < len(h.Lines) && h.Lines[i+1] == `\ No newline at end of file`
			text, nl := l[1:], "\n"
			if noNL {
				nl = ""
			}
			switch l[0] {
			case ' ', '-':
				if at >= len(lines) || lines[at] != text+nl {
					t.Fatalf("hunk %+v: line %d of old is %q, the patch says %q", h, at+1, lines[min(at, len(lines)-1)], text+nl)
				}
				at++
				if l[0] == ' ' {
					out = append(out, text+nl)
				}
			case '+':
				out = append(out, text+nl)
			case '\\':
			default:
				t.Fatalf("hunk %+v: bad line %q", h, l)
			}
		}
	}
	return strings.Join(append(out, lines[at:]...), "")
}

func numberedText(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestStructuredPatch(t *testing.T) {
	long := numberedText(1, 40)
	tests := []struct {
		name     string
		old, new string
		want     []Hunk
	}{
		{"equal", "a\n", "a\n", []Hunk{}},
		{"one line in the middle", long, strings.Replace(long, "line 20\n", "LINE 20\n", 1), []Hunk{{
			OldStart: 17, OldLines: 7, NewStart: 17, NewLines: 7,
			Lines: []string{" line 17", " line 18", " line 19", "-line 20", "+LINE 20", " line 21", " line 22", " line 23"},
		}}},
		{"new file", "", "a\nb\n", []Hunk{{OldStart: 1, OldLines: 0, NewStart: 1, NewLines: 2, Lines: []string{"+a", "+b"}}}},
		{"emptied", "a\n", "", []Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 0, Lines: []string{"-a"}}}},
		{"no newline at end", "a\nb", "a\nc", []Hunk{{
			OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2,
			Lines: []string{" a", "-b", `\ No newline at end of file`, "+c", `\ No newline at end of file`},
		}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := structuredPatch(tc.old, tc.new)
			if !ok {
				t.Fatal("no patch")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("hunks (-want +got):\n%s", diff)
			}
			if back := applyHunks(t, tc.old, got); back != tc.new {
				t.Errorf("the patch makes %q, want %q", back, tc.new)
			}
		})
	}
}

// Whatever the change, the patch turns the old text into the new one.
func TestStructuredPatchApplies(t *testing.T) {
	long := numberedText(1, 60)
	cases := [][2]string{
		{long, strings.ReplaceAll(long, "line 1", "LINE 1")},              // many hunks
		{long, "head\n" + long + "tail"},                                  // both ends
		{long, strings.Replace(long, numberedText(10, 50), "", 1)},        // a big cut
		{long, strings.Replace(long, "line 30\n", numberedText(1, 9), 1)}, // a repeat
		{"a\r\nb\r\n", "a\r\nc\r\n"},
		{"x", "y"},
		{"", "only\nnew"},
		{"same\nstart\n", "same\nstart\nmore\n"},
	}
	for i, c := range cases {
		hunks, ok := structuredPatch(c[0], c[1])
		if !ok {
			t.Fatalf("case %d: no patch", i)
		}
		if got := applyHunks(t, c[0], hunks); got != c[1] {
			t.Errorf("case %d: the patch makes %q, want %q", i, got, c[1])
		}
	}
	if _, ok := structuredPatch(strings.Repeat("x\n", diffMaxBytes), strings.Repeat("y\n", diffMaxBytes)); ok {
		t.Error("a change past diffMaxBytes was diffed")
	}
	// A one-line edit of a file past the cap is diffed: only the changed
	// middle counts.
	big := strings.Repeat("x\n", diffMaxBytes)
	edited := big[:diffMaxBytes] + "y\n" + big[diffMaxBytes+2:]
	if hunks, ok := structuredPatch(big, edited); !ok || len(hunks) != 1 || hunks[0].OldStart != diffMaxBytes/2-2 {
		t.Errorf("a one-line edit of a large file: %v %+v", ok, hunks)
	}
}

// The results of Edit and Write calls, as stream-json's tool_use_result
// carries them, against a golden file (the directory replaced by DIR).
func TestEditAndWriteResultsGolden(t *testing.T) {
	dir := t.TempDir()
	src := numberedText(1, 12)
	steps := []struct {
		tool  tool.Tool
		input map[string]any
	}{
		{Edit(Options{}), map[string]any{"file_path": "f.txt", "old_string": "line 6\n", "new_string": "line six\nline 6½\n"}},
		{Edit(Options{}), map[string]any{"file_path": "f.txt", "old_string": "line 1", "new_string": "LINE 1", "replace_all": true}},
		{Edit(Options{}), map[string]any{"file_path": "new.txt", "old_string": "", "new_string": "made by Edit\n"}},
		{Write(Options{}), map[string]any{"file_path": "w.txt", "content": "one\ntwo\nthree"}},
		{Write(Options{}), map[string]any{"file_path": "w.txt", "content": "one\n2\nthree\n"}},
		{Write(Options{}), map[string]any{"file_path": "w.txt", "content": "one\n2\nthree\n"}},
	}
	writeTree(t, dir, map[string]string{"f.txt": src})
	var results []any
	for _, s := range steps {
		res := call(t, s.tool, tool.Env{Cwd: dir}, s.input)
		if res.IsError {
			t.Fatalf("%s %v: %s", s.tool.Info().Name, s.input, text(res))
		}
		results = append(results, map[string]any{"tool": s.tool.Info().Name, "input": s.input, "tool_use_result": res.Meta})
	}
	raw, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "edit_write_results.golden.json"), append(bytes.ReplaceAll(raw, []byte(dir), []byte("DIR")), '\n'))
}

// The results have the fields Claude Code's FileEditOutput and
// FileWriteOutput require, as the Agent SDK's sdk-tools.d.ts declares them.
func TestEditAndWriteResultsMatchSDKTypes(t *testing.T) {
	mods := npm.Modules(t, "@anthropic-ai/claude-agent-sdk")
	dts, err := os.ReadFile(filepath.Join(mods, "@anthropic-ai", "claude-agent-sdk", "sdk-tools.d.ts"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"f.txt": "a\nb\n"})
	edit := call(t, Edit(Options{}), tool.Env{Cwd: dir}, map[string]any{"file_path": "f.txt", "old_string": "b", "new_string": "c"})
	write := call(t, Write(Options{}), tool.Env{Cwd: dir}, map[string]any{"file_path": "g.txt", "content": "x\n"})
	for iface, meta := range map[string]any{"FileEditOutput": edit.Meta, "FileWriteOutput": write.Meta} {
		required, hunkFields := declaredFields(t, string(dts), iface)
		raw, _ := json.Marshal(meta)
		var got map[string]json.RawMessage
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		for _, f := range required {
			if _, ok := got[f]; !ok {
				t.Errorf("%s: the result lacks %q (has %s)", iface, f, raw)
			}
		}
		var hunks []map[string]json.RawMessage
		if err := json.Unmarshal(got["structuredPatch"], &hunks); err != nil || len(hunks) == 0 {
			t.Fatalf("%s: structuredPatch %s: %v", iface, got["structuredPatch"], err)
		}
		var keys []string
		for k := range hunks[0] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Sort(hunkFields)
		if diff := cmp.Diff(hunkFields, keys); diff != "" {
			t.Errorf("%s: hunk fields (-sdk +ours):\n%s", iface, diff)
		}
	}
}

// declaredFields reads an interface of sdk-tools.d.ts: its required
// top-level fields and those of its structuredPatch items.
func declaredFields(t *testing.T, dts, iface string) (required, hunk []string) {
	t.Helper()
	start := strings.Index(dts, "export interface "+iface+" {")
	if start < 0 {
		t.Fatalf("sdk-tools.d.ts declares no %s", iface)
	}
	body := dts[start:]
	body = body[:strings.Index(body, "\n}\n")]
	for _, m := range regexp.MustCompile(`(?m)^  (\w+)(\??):`).FindAllStringSubmatch(body, -1) {
		if m[2] == "" {
			required = append(required, m[1])
		}
	}
	sp := body[strings.Index(body, "structuredPatch: {"):]
	sp = sp[:strings.Index(sp, "}[]")]
	for _, m := range regexp.MustCompile(`(?m)^    (\w+):`).FindAllStringSubmatch(sp, -1) {
		hunk = append(hunk, m[1])
	}
	if len(required) == 0 || len(hunk) == 0 {
		t.Fatalf("could not read %s from sdk-tools.d.ts", iface)
	}
	return required, hunk
}

// An approval of Edit or Write carries the change as a unified diff:
// the whole content added for a new file, the diff for an existing one.
func TestEditAndWritePreview(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"f.txt": "a\nb\nc\n"})
	env := tool.Env{Cwd: dir}
	f := filepath.Join(dir, "f.txt")
	tests := []struct {
		name  string
		tool  tool.Tool
		input string
		want  *permission.Change
	}{
		{"edit", Edit(Options{}), `{"file_path":"f.txt","old_string":"b","new_string":"B"}`, &permission.Change{
			Path: f, Old: "a\nb\nc\n", New: "a\nB\nc\n",
			Diff: "--- " + f + "\n+++ " + f + "\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
		}},
		{"write over", Write(Options{}), `{"file_path":"f.txt","content":"a\nc\n"}`, &permission.Change{
			Path: f, Old: "a\nb\nc\n", New: "a\nc\n",
			Diff: "--- " + f + "\n+++ " + f + "\n@@ -1,3 +1,2 @@\n a\n-b\n c\n",
		}},
		{"write new", Write(Options{}), `{"file_path":"n/new.txt","content":"x\ny\n"}`, &permission.Change{
			Path: filepath.Join(dir, "n/new.txt"), Create: true, New: "x\ny\n",
			Diff: "--- /dev/null\n+++ " + filepath.Join(dir, "n/new.txt") + "\n@@ -0,0 +1,2 @@\n+x\n+y\n",
		}},
		{"edit creates", Edit(Options{}), `{"file_path":"e.txt","old_string":"","new_string":"z\n"}`, &permission.Change{
			Path: filepath.Join(dir, "e.txt"), Create: true, New: "z\n",
			Diff: "--- /dev/null\n+++ " + filepath.Join(dir, "e.txt") + "\n@@ -0,0 +1 @@\n+z\n",
		}},
		{"edit that will fail", Edit(Options{}), `{"file_path":"f.txt","old_string":"nope","new_string":"x"}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pv, ok := tc.tool.(permission.Previewer)
			if !ok {
				t.Fatalf("%s is not a Previewer", tc.tool.Info().Name)
			}
			got, err := pv.Preview(env, json.RawMessage(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("change (-want +got):\n%s", diff)
			}
		})
	}
	if got := readFile(t, f); got != "a\nb\nc\n" {
		t.Errorf("a preview changed the file: %q", got)
	}
	// A large file's change carries its diff, not the file twice.
	big := "first\n" + strings.Repeat("x\n", changeTextMax/2)
	writeTree(t, dir, map[string]string{"big.txt": big})
	got, err := Edit(Options{}).(permission.Previewer).Preview(env, json.RawMessage(`{"file_path":"big.txt","old_string":"first","new_string":"FIRST"}`))
	if err != nil || got == nil || got.Diff == "" || got.Old != "" || got.New != "" {
		t.Errorf("a large file's change: %v, %+.80v", err, got)
	}
	if _, err := os.Stat(filepath.Join(dir, "n")); err == nil {
		t.Error("a preview made a directory")
	}
}
