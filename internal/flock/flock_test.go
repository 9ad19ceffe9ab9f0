//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package flock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// The lock keeps a second open file out while the first is open, and goes
// with the first's descriptor.
func TestTryExclusive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := open(), open()
	defer b.Close()
	if err := TryExclusive(a); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	if err := TryExclusive(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock while the first is held: %v, want ErrLocked", err)
	}
	a.Close()
	if err := TryExclusive(b); err != nil {
		t.Fatalf("second lock after the first closed: %v", err)
	}
}
