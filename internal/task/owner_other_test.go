//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris)

package task_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/internal/task"
)

// TestAliveWhileFileExists documents the fallback: without flock, a lock
// file is all there is to go on.
func TestAliveWhileFileExists(t *testing.T) {
	dir := t.TempDir()
	const id = "4242-deadbeefdeadbeef"
	if err := os.WriteFile(filepath.Join(dir, id+".lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !task.Alive(dir, id) {
		t.Error("Alive = false while the lock file exists")
	}
}
