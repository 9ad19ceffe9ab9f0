//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package task_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/task"
)

// TestAliveStaleLockFile: a lock file nobody holds is what a dead process
// leaves behind. It counts as dead, and Alive cleans it up.
func TestAliveStaleLockFile(t *testing.T) {
	dir := t.TempDir()
	const id = "4242-deadbeefdeadbeef"
	path := filepath.Join(dir, id+".lock")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if task.Alive(dir, id) {
		t.Fatal("Alive = true for a lock file no process holds")
	}
	if exists(path) {
		t.Error("Alive left the dead owner's lock file behind")
	}
	if task.Alive(dir, id) {
		t.Error("Alive = true on the second look")
	}
}

// TestEnded: Ended is true only for an owner that was here and is gone
// (its lock file left free), never for a live owner or for one that has
// no file here (it may live on another machine).
func TestEnded(t *testing.T) {
	dir := t.TempDir()
	live := claim(t, dir)
	const stale = "4242-deadbeefdeadbeef"
	if err := os.WriteFile(filepath.Join(dir, stale+".lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		owner string
		want  bool
	}{{live.ID(), false}, {"777-0000000000000000", false}, {"../x", false}, {stale, true}} {
		if got := task.Ended(dir, tc.owner); got != tc.want {
			t.Errorf("Ended(%q) = %v, want %v", tc.owner, got, tc.want)
		}
	}
	if !task.Alive(dir, live.ID()) {
		t.Error("Ended took a live owner's lock")
	}
}

// Helper process modes, chosen by the environment variable helperEnv.
const (
	helperEnv = "CADRE_TASK_TEST_HELPER"
	dirEnv    = "CADRE_TASK_TEST_DIR"
	// modeOwner claims an owner in $dirEnv, prints its id, and blocks on stdin.
	modeOwner = "owner"
	// modeOwnerSpawn is modeOwner that first starts a modeBlock child
	// sharing its stdin, as cadre starts shell commands that may outlive it.
	modeOwnerSpawn = "owner-spawn"
	// modeBlock blocks on stdin.
	modeBlock = "block"
)

// TestHelperProcess is not a test: it is the body of the helper processes
// the tests below start by re-running the test binary.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process only")
	}
	switch mode {
	case modeOwner, modeOwnerSpawn:
		o, err := task.ClaimOwner(os.Getenv(dirEnv))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if mode == modeOwnerSpawn {
			child := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
			child.Env = append(os.Environ(), helperEnv+"="+modeBlock)
			child.Stdin = os.Stdin
			if err := child.Start(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
		fmt.Println(o.ID())
	}
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// startOwnerProcess starts a helper process that claims an owner in dir,
// and returns it with the owner id. stdin is the helper's standard input:
// the helper (and any child it starts) runs until it is closed or killed.
func startOwnerProcess(t *testing.T, dir, mode string, stdin *os.File) (*exec.Cmd, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, dirEnv+"="+dir)
	cmd.Stdin = stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper process: %v", err)
	}
	// If the helper hangs, ctx's deadline kills it and this read ends.
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("reading the helper's owner id: %v (stderr: %s)", err, stderr.String())
	}
	return cmd, strings.TrimSpace(line)
}

// TestAliveAfterKill is the crash the owner scheme exists for: a process
// killed with SIGKILL runs no cleanup, leaves its lock file, and must be
// seen as dead.
func TestAliveAfterKill(t *testing.T) {
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd, id := startOwnerProcess(t, dir, modeOwner, r)
	if !task.Alive(dir, id) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("Alive(%s) = false while the helper process runs", id)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() // "signal: killed"; once it returns the process is gone
	path := filepath.Join(dir, id+".lock")
	if !exists(path) {
		t.Fatal("the killed process's lock file is missing: the test shows nothing")
	}
	if task.Alive(dir, id) {
		t.Errorf("Alive(%s) = true after the process was killed", id)
	}
	if exists(path) {
		t.Error("Alive left the killed owner's lock file behind")
	}
}

// TestAliveNotHeldByChildren: cadre starts commands that may outlive it (a
// background shell). They must not inherit the lock, or a dead cadre would
// look alive for as long as they run.
func TestAliveNotHeldByChildren(t *testing.T) {
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // ends the grandchild, which blocks reading r
	cmd, id := startOwnerProcess(t, dir, modeOwnerSpawn, r)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The grandchild still runs: w is open, so its read of r blocks.
	if task.Alive(dir, id) {
		t.Errorf("Alive(%s) = true after its process was killed: a child process kept the lock", id)
	}
}
