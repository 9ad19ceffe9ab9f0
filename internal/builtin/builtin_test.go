package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// call validates input as the loop would, then runs the tool.
func call(t *testing.T, tl tool.Tool, env tool.Env, input map[string]any) tool.Result {
	t.Helper()
	res, err := callErr(t, context.Background(), tl, env, input)
	if err != nil {
		t.Fatalf("%s %v: unexpected error: %v", tl.Info().Name, input, err)
	}
	return res
}

func callErr(t *testing.T, ctx context.Context, tl tool.Tool, env tool.Env, input map[string]any) (tool.Result, error) {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	set, err := tool.NewSet(tl)
	if err != nil {
		t.Fatal(err)
	}
	if err := set.Validate(tl.Info().Name, raw); err != nil {
		t.Fatalf("%s %s: input rejected: %v", tl.Info().Name, raw, err)
	}
	return tl.Call(ctx, env, raw)
}

func text(r tool.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// writeTree creates files (path → content) under dir.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// setMtimes gives files (relative to dir) distinct modification times, the
// first newest.
func setMtimes(t *testing.T, dir string, newestFirst ...string) {
	t.Helper()
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, p := range newestFirst {
		mt := base.Add(-time.Duration(i) * time.Hour)
		if err := os.Chtimes(filepath.Join(dir, p), mt, mt); err != nil {
			t.Fatal(err)
		}
	}
}

func TestToolsOrderAndTraits(t *testing.T) {
	type traits struct {
		Name       string
		Access     tool.Access
		Concurrent bool
	}
	var got []traits
	for _, tl := range Tools(Options{}) {
		i := tl.Info()
		got = append(got, traits{i.Name, i.Access, i.ConcurrencySafe})
		if i.Description == "" || strings.Contains(i.Description, "{{") || strings.Contains(i.Description, "<no value>") {
			t.Errorf("%s: description not rendered: %q", i.Name, i.Description)
		}
		if _, ok := tl.(tool.Targeted); !ok {
			t.Errorf("%s does not implement tool.Targeted", i.Name)
		}
	}
	want := []traits{
		{"Read", tool.AccessRead, true},
		{"Write", tool.AccessEdit, false},
		{"Edit", tool.AccessEdit, false},
		{"Glob", tool.AccessRead, true},
		{"Grep", tool.AccessRead, true},
		{"LS", tool.AccessRead, true},
		{"Bash", tool.AccessExec, false},
		{"TodoWrite", tool.AccessRead, false},
		{"WebFetch", tool.AccessOther, true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestDescriptionsReflectOptions(t *testing.T) {
	d := Read(Options{ReadLineLimit: 1234}).Info().Description
	if !strings.Contains(d, "1234 lines") {
		t.Errorf("Read description does not mention the configured limit:\n%s", d)
	}
	d = Bash(Options{BashMaxTimeout: 5 * time.Minute}).Info().Description
	if !strings.Contains(d, "300000ms") {
		t.Errorf("Bash description does not mention the configured max timeout:\n%s", d)
	}
}

// The property names are Claude Code's, which models are trained on.
func TestSchemasMatchClaudeCode(t *testing.T) {
	want := map[string]struct{ props, required []string }{
		"Read":  {[]string{"file_path", "limit", "offset"}, []string{"file_path"}},
		"Write": {[]string{"content", "file_path"}, []string{"file_path", "content"}},
		"Edit":  {[]string{"file_path", "new_string", "old_string", "replace_all"}, []string{"file_path", "old_string", "new_string"}},
		"Glob":  {[]string{"path", "pattern"}, []string{"pattern"}},
		"Grep": {[]string{"-A", "-B", "-C", "-i", "-n", "glob", "head_limit", "multiline", "output_mode", "path", "pattern", "type"},
			[]string{"pattern"}},
		"LS":        {[]string{"ignore", "path"}, []string{"path"}},
		"Bash":      {[]string{"command", "description", "run_in_background", "timeout"}, []string{"command"}},
		"TodoWrite": {[]string{"todos"}, []string{"todos"}},
		"WebFetch":  {[]string{"offset", "prompt", "url"}, []string{"url", "prompt"}},
	}
	for _, tl := range Tools(Options{}) {
		info := tl.Info()
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(info.InputSchema, &s); err != nil {
			t.Fatalf("%s: schema: %v", info.Name, err)
		}
		w := want[info.Name]
		var props []string
		for p := range s.Properties {
			props = append(props, p)
		}
		slices.Sort(props)
		if s.Type != "object" {
			t.Errorf("%s: schema type %q", info.Name, s.Type)
		}
		if diff := cmp.Diff(w.props, props); diff != "" {
			t.Errorf("%s properties (-want +got):\n%s", info.Name, diff)
		}
		if diff := cmp.Diff(w.required, s.Required); diff != "" {
			t.Errorf("%s required (-want +got):\n%s", info.Name, diff)
		}
	}
}

func TestValidateRejectsWrongTypes(t *testing.T) {
	set, err := tool.NewSet(Tools(Options{})...)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, input, want string
	}{
		{"string offset", "Read", `{"file_path":"/x","offset":"ten"}`, "offset"},
		{"missing file_path", "Read", `{}`, "file_path"},
		{"bool as string", "Edit", `{"file_path":"/x","old_string":"a","new_string":"b","replace_all":"yes"}`, "replace_all"},
		{"bad output_mode", "Grep", `{"pattern":"x","output_mode":"lines"}`, "output_mode"},
		{"-n not bool", "Grep", `{"pattern":"x","-n":1}`, "-n"},
		{"ignore not list", "LS", `{"path":"/","ignore":"*.log"}`, "ignore"},
		{"unknown property", "Bash", `{"command":"ls","cwd":"/"}`, "cwd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := set.Validate(tc.tool, json.RawMessage(tc.input))
			if err == nil {
				t.Fatalf("Validate(%s, %s) accepted the input", tc.tool, tc.input)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not name %q", err, tc.want)
			}
		})
	}
	// And the right types pass.
	for name, input := range map[string]string{
		"Read": `{"file_path":"/x","offset":10,"limit":5}`,
		"Grep": `{"pattern":"x","-i":true,"-n":false,"-C":2,"output_mode":"content","head_limit":3}`,
		"LS":   `{"path":"/","ignore":["*.log"]}`,
		"Bash": `{"command":"ls","timeout":1000,"description":"list"}`,
	} {
		if err := set.Validate(name, json.RawMessage(input)); err != nil {
			t.Errorf("Validate(%s, %s): %v", name, input, err)
		}
	}
}

func TestTargets(t *testing.T) {
	home := t.TempDir()
	o := Options{HomeDir: home}
	env := tool.Env{Cwd: "/work/proj"}
	tests := []struct {
		tool  tool.Tool
		input string
		want  string
	}{
		{Read(o), `{"file_path":"a/../b.go"}`, "/work/proj/b.go"},
		{Read(o), `{"file_path":"/etc//passwd"}`, "/etc/passwd"},
		{Read(o), `{"file_path":"~/notes.txt"}`, filepath.Join(home, "notes.txt")},
		{Write(o), `{"file_path":"out.txt","content":""}`, "/work/proj/out.txt"},
		{Edit(o), `{"file_path":"~","old_string":"a","new_string":"b"}`, home},
		{Glob(o), `{"pattern":"**/*.go"}`, "/work/proj"},
		{Glob(o), `{"pattern":"src/**/*.go","path":"sub"}`, "/work/proj/sub/src"},
		{Glob(o), `{"pattern":"/abs/dir/*.go"}`, "/abs/dir"},
		{Grep(o), `{"pattern":"x"}`, "/work/proj"},
		{Grep(o), `{"pattern":"x","path":"pkg/a.go"}`, "/work/proj/pkg/a.go"},
		{LS(o), `{"path":"."}`, "/work/proj"},
		{Bash(o), `{"command":"rm -rf build"}`, "rm -rf build"},
	}
	for _, tc := range tests {
		got, err := tc.tool.(tool.Targeted).Target(env, json.RawMessage(tc.input))
		if err != nil {
			t.Errorf("%s %s: %v", tc.tool.Info().Name, tc.input, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s %s: target %q, want %q", tc.tool.Info().Name, tc.input, got, tc.want)
		}
	}
}
