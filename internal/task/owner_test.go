package task_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/task"
)

func claim(t *testing.T, dir string) *task.Owner {
	t.Helper()
	o, err := task.ClaimOwner(dir)
	if err != nil {
		t.Fatalf("ClaimOwner(%s): %v", dir, err)
	}
	t.Cleanup(func() { o.Close() })
	return o
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestClaimOwner(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "home", "run") // created by ClaimOwner
	a, b := claim(t, dir), claim(t, dir)
	for _, o := range []*task.Owner{a, b} {
		if err := task.ValidateID(o.ID()); err != nil {
			t.Errorf("owner id %q is not a valid id: %v", o.ID(), err)
		}
		if !exists(filepath.Join(dir, o.ID()+".lock")) {
			t.Errorf("no lock file for owner %s", o.ID())
		}
		if !task.Alive(dir, o.ID()) {
			t.Errorf("Alive(%s) = false for an owner this process holds", o.ID())
		}
	}
	if a.ID() == b.ID() {
		t.Errorf("two owners got the same id %q", a.ID())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 2 {
		t.Errorf("run dir holds %v, want exactly the two lock files (no leftovers)", names)
	}

	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if exists(filepath.Join(dir, a.ID()+".lock")) {
		t.Error("Close left the lock file behind")
	}
	if task.Alive(dir, a.ID()) {
		t.Error("Alive = true for a closed owner")
	}
	if !task.Alive(dir, b.ID()) {
		t.Error("closing one owner made the other dead")
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v, want nil", err)
	}
}

func TestClaimOwnerBadDir(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := task.ClaimOwner(filepath.Join(file, "run"))
	if err == nil {
		o.Close()
		t.Fatal("ClaimOwner under a regular file succeeded")
	}
	if !strings.Contains(err.Error(), "claim task owner") {
		t.Errorf("err = %v, want it to say what failed", err)
	}
}

func TestAliveUnknownAndInvalid(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "run")
	claim(t, dir)
	// A lock file outside dir that a traversal id would reach.
	outside := filepath.Join(root, "x.lock")
	if err := os.WriteFile(outside, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"", "../x", "run/../../x", "a/b", "x.lock", "123-never-claimed"} {
		if task.Alive(dir, id) {
			t.Errorf("Alive(%q) = true, want false", id)
		}
	}
	if !exists(outside) {
		t.Error("Alive with a traversal id removed a file outside the run dir")
	}
	if task.Alive(filepath.Join(root, "missing"), "123-abc") {
		t.Error("Alive in a directory that does not exist = true")
	}
}
