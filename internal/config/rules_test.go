package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestAddRules(t *testing.T) {
	cases := []struct {
		name     string
		existing string // "" for no file
		behavior string
		rules    []string
		want     string // the permissions object after, as JSON
		wantErr  string
	}{
		{name: "creates the file", behavior: "allow", rules: []string{"Bash(touch ran.txt && echo BASH-RAN)"},
			want: `{"allow":["Bash(touch ran.txt && echo BASH-RAN)"]}`},
		{name: "keeps what is there, without repeats", existing: `{"model":"opus","permissions":{"allow":["Read"],"task":{"b":"deny","a":"allow"}}}`,
			behavior: "allow", rules: []string{"Read", "Bash(npm test:*)"},
			want: `{"allow":["Read","Bash(npm test:*)"],"task":{"b":"deny","a":"allow"}}`},
		{name: "deny list", existing: `{"permissions":{"allow":["Read"]}}`, behavior: "deny", rules: []string{"WebFetch"},
			want: `{"allow":["Read"],"deny":["WebFetch"]}`},
		{name: "whitespace only", existing: " \n", behavior: "ask", rules: []string{"Bash"}, want: `{"ask":["Bash"]}`},
		{name: "broken file", existing: `{"permissions": {`, behavior: "allow", rules: []string{"Read"}, wantErr: "invalid JSON"},
		{name: "allow not a list", existing: `{"permissions":{"allow":"Read"}}`, behavior: "allow", rules: []string{"Read"}, wantErr: "permissions.allow: want a list"},
		{name: "bad behavior", behavior: "always", rules: []string{"Read"}, wantErr: `"always"`},
		{name: "bad rule", behavior: "allow", rules: []string{"Bash(ls"}, wantErr: `rule "Bash(ls"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ".cadre", "settings.local.json")
			if tc.existing != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.existing), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := AddRules(path, tc.behavior, tc.rules)
			if tc.wantErr != "" {
				var ce *Error
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.As(err, &ce) || ce.File != path {
					t.Fatalf("err = %v, want a config error on %s saying %s", err, path, tc.wantErr)
				}
				if data, _ := os.ReadFile(path); string(data) != tc.existing {
					t.Errorf("the file changed on error: %q", data)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(data, &top); err != nil {
				t.Fatalf("written file is not JSON: %v\n%s", err, data)
			}
			if strings.Contains(string(data), `\u0026`) {
				t.Errorf("rules written escaped: %s", data)
			}
			if got := compact(t, top["permissions"]); got != tc.want {
				t.Errorf("permissions = %s, want %s", got, tc.want)
			}
			if strings.Contains(tc.existing, `"model"`) && string(top["model"]) != `"opus"` {
				t.Errorf("model = %s, want the file's other keys kept", top["model"])
			}
			if tc.existing != "" {
				if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
					t.Errorf("mode = %v, want the file's own 0600 kept", st.Mode().Perm())
				}
			}
			// The result loads as settings.
			if _, _, _, err := parseSettings(path, data); err != nil {
				t.Errorf("written file does not load: %v", err)
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".settings-*"))
			if len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	// Compacted, not re-marshalled: the task object's order counts.
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCheckLocal: an approval is never written into a local settings file
// that is not the user's own.
func TestCheckLocal(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("SKIPPED, NOT TESTED: git is not installed")
	}
	proj := t.TempDir()
	path := LocalSettingsPath(proj)
	if err := CheckLocal(proj, path); err != nil {
		t.Fatalf("missing file: %v, want it writable", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(t.TempDir(), "elsewhere.json")
	if err := os.WriteFile(other, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, path); err != nil {
		t.Fatal(err)
	}
	if err := CheckLocal(proj, path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("link: err = %v, want a refusal", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-f", path}, {"commit", "-qm", "x"}} {
		cmd := exec.Command("git", append([]string{"-C", proj, "-c", "user.name=t", "-c", "user.email=t@localhost"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := CheckLocal(proj, path); err == nil || !strings.Contains(err.Error(), "tracked by git") {
		t.Errorf("tracked: err = %v, want a refusal", err)
	}
}
