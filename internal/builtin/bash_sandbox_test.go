//go:build linux

package builtin

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/internal/sandbox/sandboxtest"
	"github.com/cadre-dev/cadre/tool"
)

// sandboxed returns a Runner whose launcher is this test binary, which
// links the sandbox package and so serves as one.
func sandboxed(t *testing.T, ws string) *sandbox.Runner {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &sandbox.Runner{Status: sandboxtest.Require(t, exe), Writable: []string{ws}}
}

// The acceptance scenario: a command that writes outside the workspace and
// inside it leaves only the inside file, and its result names the refusal.
func TestBashSandboxRefusal(t *testing.T) {
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	for _, d := range []string{ws, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Sandbox: sandboxed(t, ws), Env: []string{"HOME=" + home}}
	res := call(t, Bash(o), tool.Env{Cwd: ws}, map[string]any{"command": `sh -c 'echo x > ~/escape; echo y > ./inside'`})
	if _, err := os.Stat(filepath.Join(home, "escape")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("~/escape was written (err %v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "inside")); err != nil || string(b) != "y\n" {
		t.Errorf("./inside = %q, %v; want y", b, err)
	}
	want := "the sandbox refused writing " + filepath.Join(home, "escape") + " (outside the workspace)"
	if got := text(res); !strings.Contains(got, want) || !strings.Contains(got, "ask the user") {
		t.Errorf("result %q\nlacks %q", got, want)
	}
}

func TestBashSandboxRequired(t *testing.T) {
	ws := t.TempDir()
	r := &sandbox.Runner{Mode: sandbox.ModeRequired, Status: sandbox.Status{Reason: "no Landlock here"}, Writable: []string{ws}}
	res := call(t, Bash(Options{Sandbox: r}), tool.Env{Cwd: ws}, map[string]any{"command": "echo ran > ran"})
	if !res.IsError || !strings.Contains(text(res), "sandbox.mode is required") {
		t.Errorf("result = %q, want a refusal naming sandbox.mode", text(res))
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("the command ran unsandboxed under mode required")
	}
	var warned []string
	r = &sandbox.Runner{Status: sandbox.Status{Reason: "no Landlock here"}, Warn: func(m string) { warned = append(warned, m) }}
	for range 2 {
		if res := call(t, Bash(Options{Sandbox: r}), tool.Env{Cwd: ws}, map[string]any{"command": "true"}); res.IsError {
			t.Fatalf("auto mode without a sandbox: %q", text(res))
		}
	}
	if len(warned) != 1 {
		t.Errorf("auto mode warned %d times, want once: %q", len(warned), warned)
	}
}
