//go:build unix

package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/tool"
	"github.com/google/go-cmp/cmp"
)

func TestBash(t *testing.T) {
	dir := t.TempDir()
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeTree(t, dir, map[string]string{"hello.txt": "hi there\n"})
	tests := []struct {
		name    string
		input   map[string]any
		opts    Options
		want    string
		isError bool
	}{
		{name: "stdout", input: map[string]any{"command": "echo hello"}, want: "hello"},
		{name: "stderr interleaved in order", input: map[string]any{"command": "echo out; echo err >&2; echo out2"}, want: "out\nerr\nout2"},
		{name: "runs in cwd", input: map[string]any{"command": "pwd -P; cat hello.txt"}, want: realDir + "\nhi there"},
		{name: "no output", input: map[string]any{"command": "true"}, want: "(no output)"},
		{name: "stdin is closed", input: map[string]any{"command": "cat; echo after"}, want: "after"},
		{name: "exit code", input: map[string]any{"command": "echo oops; exit 3"}, want: "oops\nExit code 3", isError: true},
		{name: "exit code, no output", input: map[string]any{"command": "exit 1"}, want: "Exit code 1", isError: true},
		{name: "killed by a signal", input: map[string]any{"command": "kill -9 $$"}, want: "Killed by signal 9 (killed)", isError: true},
		{name: "sh", input: map[string]any{"command": "echo from sh"}, opts: Options{Shell: "/bin/sh"}, want: "from sh"},
		{name: "empty command", input: map[string]any{"command": "  "}, want: "command is empty: give the shell command to run.", isError: true},
		{name: "negative timeout", input: map[string]any{"command": "true", "timeout": -5}, want: "timeout must not be negative (got -5); it is in milliseconds, at most 600000.", isError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, Bash(tc.opts), tool.Env{Cwd: dir}, tc.input)
			if res.IsError != tc.isError {
				t.Errorf("IsError = %v, want %v", res.IsError, tc.isError)
			}
			if diff := cmp.Diff(tc.want, text(res)); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBashMeta(t *testing.T) {
	res := call(t, Bash(Options{}), tool.Env{Cwd: t.TempDir()}, map[string]any{"command": "echo a; echo b >&2; exit 2"})
	want := BashMeta{Stdout: "a\nb", ExitCode: 2}
	if diff := cmp.Diff(want, res.Meta); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
}

func TestBashMissingCwd(t *testing.T) {
	res := call(t, Bash(Options{}), tool.Env{Cwd: filepath.Join(t.TempDir(), "gone")}, map[string]any{"command": "true"})
	if !res.IsError || !strings.Contains(text(res), "does not exist") {
		t.Errorf("got %v %q", res.IsError, text(res))
	}
}

func TestBashOutputCap(t *testing.T) {
	res := call(t, Bash(Options{BashOutputLimit: 1000}), tool.Env{Cwd: t.TempDir()}, map[string]any{"command": "seq 1 20000"})
	got := text(res)
	if !strings.HasPrefix(got, "1\n2\n3\n") || !strings.HasSuffix(got, "\n19999\n20000") {
		t.Errorf("head or tail lost: %q … %q", got[:20], got[len(got)-20:])
	}
	// seq 1 20000 prints 108894 bytes; 1000 are kept.
	if !strings.Contains(got, "\n\n… 107894 characters truncated …\n\n") {
		t.Errorf("no truncation marker in %q", got)
	}
	if len(got) > 1100 {
		t.Errorf("output is %d characters, want about 1000", len(got))
	}
}

func TestCapture(t *testing.T) {
	tests := []struct {
		name   string
		limit  int
		writes []string
		want   string
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef"},
		{"exactly", 6, []string{"abc", "def"}, "abcdef"},
		{"head and tail", 4, []string{"ab", "cdef", "gh"}, "ab\n\n… 4 characters truncated …\n\ngh"},
		{"many small writes", 4, strings.Split("abcdefghijklmnop", ""), "ab\n\n… 12 characters truncated …\n\nop"},
		// "é" is two bytes: a cut through it drops the half.
		{"whole characters only", 6, []string{"ééééé"}, "é\n\n… 6 characters truncated …\n\né"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCapture(tc.limit)
			for _, w := range tc.writes {
				c.Write([]byte(w))
			}
			if got := c.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBashTimeout(t *testing.T) {
	dir := t.TempDir()
	began := time.Now()
	// The requested timeout is clamped to BashMaxTimeout.
	res := call(t, Bash(Options{BashMaxTimeout: 300 * time.Millisecond}), tool.Env{Cwd: dir},
		map[string]any{"command": "echo started; sleep 100 & echo $! > pid; wait", "timeout": 100000})
	if elapsed := time.Since(began); elapsed > 10*time.Second {
		t.Errorf("took %v to time out", elapsed)
	}
	got := text(res)
	if !res.IsError || !strings.Contains(got, "timed out after 300 ms") || !strings.Contains(got, "Output so far:\nstarted") {
		t.Errorf("got %v %q", res.IsError, got)
	}
	if m := res.Meta.(BashMeta); !m.Interrupted {
		t.Errorf("meta %+v: not interrupted", m)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(dir, "pid"))))
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid)
}

// Cancelling the call kills the whole process group promptly, background
// children included.
func TestBashCancelKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type outcome struct {
		res tool.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := callErr(t, ctx, Bash(Options{}), tool.Env{Cwd: dir},
			map[string]any{"command": "sleep 100 & echo $$ $! > ready; wait"})
		done <- outcome{res, err}
	}()
	// Opening the fifo waits for the shell to open it for writing.
	f, err := os.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	line, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var shellPid, sleepPid int
	if _, err := fmt.Sscan(string(line), &shellPid, &sleepPid); err != nil {
		t.Fatalf("read pids from %q: %v", line, err)
	}

	cancel()
	select {
	case o := <-done:
		if !errors.Is(o.err, context.Canceled) {
			t.Errorf("got %v, %v; want context.Canceled", o.res, o.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Bash did not return within 10s of cancellation")
	}
	waitGone(t, shellPid)
	waitGone(t, sleepPid)
}

// A background process that outlives the shell and keeps its output open
// does not hold the call past BashWaitDelay.
func TestBashBackgroundChildDoesNotHang(t *testing.T) {
	began := time.Now()
	res := call(t, Bash(Options{BashWaitDelay: 200 * time.Millisecond}), tool.Env{Cwd: t.TempDir()},
		map[string]any{"command": "sleep 100 & echo $!"})
	if elapsed := time.Since(began); elapsed > 10*time.Second {
		t.Errorf("took %v", elapsed)
	}
	if res.IsError {
		t.Errorf("error result: %s", text(res))
	}
	pid, err := strconv.Atoi(strings.TrimSpace(text(res)))
	if err != nil {
		t.Fatalf("output %q: %v", text(res), err)
	}
	// Not the tool's to kill; the test cleans up after itself.
	syscall.Kill(pid, syscall.SIGKILL)
	waitGone(t, pid)
}

// waitGone waits until pid has exited (gone, or a zombie nobody reaped).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	_, err := os.Stat("/proc/self/stat")
	haveProc := err == nil
	deadline := time.Now().Add(5 * time.Second)
	var stat []byte
	for {
		if haveProc {
			var err error
			stat, err = os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if errors.Is(err, os.ErrNotExist) {
				return
			}
			if _, after, ok := strings.Cut(string(stat), ") "); ok && (strings.HasPrefix(after, "Z") || strings.HasPrefix(after, "X")) {
				return
			}
		} else if syscall.Kill(pid, 0) == syscall.ESRCH {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d is still running: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond) // polling an external process; there is no event to wait on
	}
}

func TestBashEnvFromSettings(t *testing.T) {
	res := call(t, Bash(Options{Env: []string{"CADRE_TEST_GREETING=hello from settings"}}), tool.Env{Cwd: t.TempDir()},
		map[string]any{"command": `echo "$CADRE_TEST_GREETING"; echo "$PATH" | grep -c /`})
	if res.IsError || !strings.Contains(text(res), "hello from settings\n1") {
		t.Errorf("got %v %q, want the settings' variable and the inherited PATH", res.IsError, text(res))
	}
}
