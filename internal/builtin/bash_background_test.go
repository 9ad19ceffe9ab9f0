//go:build unix

package builtin

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/tool"
)

// startNow is a Shells that starts the command at once and keeps what it
// was given; the test waits for the end itself.
type startNow struct {
	got   Shell
	out   bytes.Buffer
	wait  func() ShellEnd
	err   error
	calls int
}

func (s *startNow) StartShell(ctx context.Context, env tool.Env, sh Shell) (ShellStarted, error) {
	s.calls++
	s.got = sh
	s.wait, s.err = sh.Start(context.Background(), &s.out)
	if s.err != nil {
		return ShellStarted{}, s.err
	}
	return ShellStarted{ID: "task-1", OutputFile: "/x/task-1.output", Message: "started task-1"}, nil
}

// A background command starts as a foreground one does — the settings'
// env, the working directory — and its end carries its exit code.
func TestBashBackgroundStartsThroughShells(t *testing.T) {
	dir := t.TempDir()
	s := &startNow{}
	bash := BindShells(Bash(Options{Env: []string{"GREETING=hi"}}), s)
	res := call(t, bash, tool.Env{Cwd: dir}, map[string]any{"command": "echo $GREETING; pwd; exit 3", "run_in_background": true, "description": "greet", "timeout": 5000})
	if res.IsError || text(res) != "started task-1" || res.Meta.(BashMeta).BackgroundTaskID != "task-1" {
		t.Fatalf("result %q (meta %#v)", text(res), res.Meta)
	}
	if s.got.Command != "echo $GREETING; pwd; exit 3" || s.got.Description != "greet" || s.got.Timeout != 5*time.Second {
		t.Errorf("Shell = %+v", s.got)
	}
	end := s.wait()
	if end.ExitCode != 3 || end.Status != "exit code 3" || end.TimedOut || end.Err != nil {
		t.Errorf("end = %+v", end)
	}
	if got := s.out.String(); got != "hi\n"+dir+"\n" {
		t.Errorf("output %q", got)
	}
}

// The timeout of a background command is capped by BashBackgroundMaxTimeout,
// not by the foreground's limit; no timeout means the background default.
func TestBashBackgroundTimeouts(t *testing.T) {
	for _, tc := range []struct {
		asked int
		want  time.Duration
	}{{0, 30 * time.Minute}, {900000, 15 * time.Minute}, {99999999, 2 * time.Hour}} {
		s := &startNow{}
		in := map[string]any{"command": "true", "run_in_background": true}
		if tc.asked > 0 {
			in["timeout"] = tc.asked
		}
		call(t, BindShells(Bash(Options{}), s), tool.Env{Cwd: t.TempDir()}, in)
		s.wait()
		if s.got.Timeout != tc.want {
			t.Errorf("timeout %d ms: got %v, want %v", tc.asked, s.got.Timeout, tc.want)
		}
	}
}

// A background command goes through the sandbox as a foreground one does:
// under sandbox.mode required on a machine that cannot sandbox, it does
// not start.
func TestBashBackgroundIsSandboxed(t *testing.T) {
	ws := t.TempDir()
	r := &sandbox.Runner{Mode: sandbox.ModeRequired, Status: sandbox.Status{Reason: "no Landlock here"}, Writable: []string{ws}}
	s := &startNow{}
	res := call(t, BindShells(Bash(Options{Sandbox: r}), s), tool.Env{Cwd: ws}, map[string]any{"command": "echo ran > ran", "run_in_background": true})
	if !res.IsError || !strings.Contains(text(res), "sandbox.mode is required") || s.calls != 1 {
		t.Errorf("result %q after %d starts, want the sandbox's refusal", text(res), s.calls)
	}
}

// BindShells leaves other tools alone.
func TestBindShellsOnlyBindsBash(t *testing.T) {
	r := Read(Options{})
	if BindShells(r, &startNow{}) != r {
		t.Error("BindShells changed Read")
	}
}
