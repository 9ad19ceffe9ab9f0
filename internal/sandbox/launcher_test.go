package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/internal/sandbox"
)

// The separate launcher is used only when it is an executable file in
// the program's own directory (links to the program followed); anything
// else leaves the program as its own launcher.
func TestFindLauncher(t *testing.T) {
	tests := []struct {
		name string
		// near sets the directory up beside the program ("" for nothing).
		near string
		want string // "exe" or "near"
	}{
		{"no launcher beside it", "", "exe"},
		{"an executable launcher", "exec", "near"},
		{"a launcher that is not executable", "plain", "exe"},
		{"a directory of that name", "dir", "exe"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			exe := filepath.Join(dir, "cadre")
			write(t, exe, 0o755)
			near := filepath.Join(dir, sandbox.LauncherName)
			switch tc.near {
			case "exec":
				write(t, near, 0o755)
			case "plain":
				write(t, near, 0o644)
			case "dir":
				if err := os.Mkdir(near, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			want := exe
			if tc.want == "near" {
				want = near
			}
			if got := sandbox.FindLauncher(exe); got != want {
				t.Errorf("FindLauncher(%s) = %s, want %s", exe, got, want)
			}
		})
	}
	t.Run("a link to the program", func(t *testing.T) {
		real, links := t.TempDir(), t.TempDir()
		exe := filepath.Join(real, "cadre")
		write(t, exe, 0o755)
		write(t, filepath.Join(real, sandbox.LauncherName), 0o755)
		// A launcher beside the link is not the program's: a directory on
		// PATH holding a link to cadre says nothing about what else is in it.
		write(t, filepath.Join(links, sandbox.LauncherName), 0o755)
		link := filepath.Join(links, "cadre")
		if err := os.Symlink(exe, link); err != nil {
			t.Fatal(err)
		}
		if got, want := sandbox.FindLauncher(link), filepath.Join(real, sandbox.LauncherName); got != want {
			t.Errorf("FindLauncher(%s) = %s, want %s", link, got, want)
		}
	})
	if got := sandbox.FindLauncher(""); got != "" {
		t.Errorf(`FindLauncher("") = %q, want ""`, got)
	}
}

func write(t *testing.T, name string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(name, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
}
