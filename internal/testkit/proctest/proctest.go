//go:build unix

// Package proctest tells tests whether processes are gone: a command
// stopped as a whole process group must leave no live process behind.
package proctest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// GroupAlive reports whether a process of process group pgid is alive. A
// zombie waiting for its reaper is not alive: a container's init may be
// slow to reap the orphans of a killed group, and kill(-pgid, 0) still
// finds those. Without /proc, kill alone answers.
func GroupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) == syscall.ESRCH {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces or ")".
		i := strings.LastIndex(string(stat), ") ")
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat)[i+2:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}

// WaitGroupGone fails t unless every process of group pgid is gone within
// limit. It polls: the kernel sends no event when a group empties.
func WaitGroupGone(t testing.TB, pgid int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for GroupAlive(pgid) {
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has live processes after %v", pgid, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
