package sandbox_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cadre-dev/cadre/internal/sandbox"
)

func TestExplain(t *testing.T) {
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(ws, ".git"), filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p := sandbox.Policy{Writable: []string{ws}, ReadOnly: []string{filepath.Join(ws, ".git")}, ReadDeny: []string{filepath.Join(home, ".ssh")}}
	escape := filepath.Join(home, "escape")
	tests := []struct {
		name, output string
		want         []string
	}{
		{"dash redirect", "sh: 1: cannot create " + escape + ": Permission denied\n",
			[]string{"the sandbox refused writing " + escape + " (outside the workspace)"}},
		{"bash redirect", "bash: line 1: " + escape + ": Permission denied\n",
			[]string{"the sandbox refused writing " + escape + " (outside the workspace)"}},
		{"touch quoted", "touch: cannot touch '" + escape + "': Permission denied\n",
			[]string{"the sandbox refused writing " + escape + " (outside the workspace)"}},
		{"rm", "rm: cannot remove '" + filepath.Join(home, ".ssh") + "': Read-only file system\n",
			[]string{"the sandbox refused reading " + filepath.Join(home, ".ssh") + " (a read-denied path, hidden from sandboxed commands)"}},
		{"relative git config", "bash: .git/config: Read-only file system\n",
			[]string{"the sandbox refused writing " + filepath.Join(ws, ".git", "config") + " (a protected path, read-only in the sandbox)"}},
		{"hidden key", "cat: " + filepath.Join(home, ".ssh", "id_rsa") + ": No such file or directory\n",
			[]string{"the sandbox refused reading " + filepath.Join(home, ".ssh", "id_rsa") + " (a read-denied path, hidden from sandboxed commands)"}},
		{"inside is not the sandbox", "sh: 1: cannot create ./locked: Permission denied\n", nil},
		{"missing elsewhere", "cat: /nonexistent/x: No such file or directory\n", nil},
		{"parent missing", "sh: 1: cannot create /nonexistent/x: Permission denied\n", nil},
		{"twice once", "sh: 1: cannot create " + escape + ": Permission denied\nsh: 1: cannot create " + escape + ": Permission denied\n",
			[]string{"the sandbox refused writing " + escape + " (outside the workspace)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Explain(tt.output, ws); !slices.Equal(got, tt.want) {
				t.Errorf("Explain = %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []sandbox.Policy{
		{Writable: []string{"rel"}},
		{ReadOnly: []string{"a/b"}},
		{ReadDeny: []string{"~/.ssh"}},
		{Network: "some"},
	} {
		if err := p.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", p)
		}
	}
}
