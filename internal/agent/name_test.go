package agent

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name    string
		wantErr string // "" = valid
	}{
		{"reviewer", ""},
		{"code-reviewer", ""},
		{"a", ""},
		{"0day", ""},
		{"snake_case-2", ""},
		{"Code-Reviewer", ""}, // folded
		{strings.Repeat("a", 64), ""},
		{strings.Repeat("a", 65), "65 characters long"},
		{"", "empty"},
		{"../x", "path traversal"},
		{"..", "path traversal"},
		{"a/b", "path traversal"},
		{`a\b`, "path traversal"},
		{"a..b", "path traversal"},
		{"-x", "must start with a letter or digit"},
		{"_x", "must start with a letter or digit"},
		{"a b", "bad character ' '"},
		{"a.b", "bad character '.'"},
		{"caf\u00e9", "bad character"},
		{"\u212a", "bad character"}, // the Kelvin sign lowers to 'k': not a valid spelling
		{"x:y", "bad character ':'"},
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("ValidateName(%q) = %v, want nil", tt.name, err)
		case tt.wantErr != "" && err == nil:
			t.Errorf("ValidateName(%q) = nil, want an error containing %q", tt.name, tt.wantErr)
		case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
			t.Errorf("ValidateName(%q) = %v, want it to contain %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestProblemError(t *testing.T) {
	tests := []struct {
		p    Problem
		want string
	}{
		{Problem{Path: "a.md", Line: 3, Message: "bad"}, "a.md:3: bad"},
		{Problem{Path: "settings.json", Message: "agents.x: bad"}, "settings.json: agents.x: bad"},
		{Problem{Message: "bad"}, "bad"},
	}
	for _, tt := range tests {
		if got := tt.p.Error(); got != tt.want {
			t.Errorf("%+v.Error() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

func TestGetFoldsCase(t *testing.T) {
	root := tree(t, map[string]string{
		".cadre/agents/r.md": "---\nname: Code-Reviewer\ndescription: d\n---\nbody\n",
	})
	r := Load(LoadOptions{Cwd: root})
	for _, name := range []string{"code-reviewer", "CODE-REVIEWER", "Code-Reviewer"} {
		d, ok := r.Get(name)
		if !ok || d.Name != "code-reviewer" {
			t.Errorf("Get(%q) = %q, %v; want code-reviewer", name, d.Name, ok)
		}
	}
	if _, ok := r.Get("\u212a"); ok {
		t.Error("Get with a non-ASCII name found an agent")
	}
	if _, ok := r.Get("missing"); ok {
		t.Error("Get(missing) found an agent")
	}
}
