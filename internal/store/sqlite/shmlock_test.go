package sqlite

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestOpenKeepsTheSharedMemoryLock: after Open the process still holds
// SQLite's lock on the -shm file's DMS byte, which tells other processes
// that the wal-index is in use. Closing any descriptor of a file drops all
// of a process's POSIX locks on it, so code that opens and closes the -shm
// file beside SQLite (as reading its header once did) silently gives the
// lock up: the next process to open the store then takes the file for its
// own, truncates it under this process's mapping, and this process's next
// statement fails with "disk I/O error" (SQLITE_IOERR_IN_PAGE).
func TestOpenKeepsTheSharedMemoryLock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED: reads the process's locks from /proc/locks, which only Linux has")
	}
	path := filepath.Join(t.TempDir(), "cadre.db")
	for i := range 2 { // a fresh file, then one an earlier DB left a WAL in
		db := open(t, path)
		if err := db.CreateSession(t.Context(), info(fmt.Sprint("s", i))); err != nil {
			t.Fatal(err)
		}
		if !holdsLock(t, path+"-shm", 128) {
			t.Fatal("after Open this process holds no lock on the -shm file's DMS byte (offset 128)")
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// holdsLock reports whether this process holds a POSIX lock covering byte
// off of the file at path, as /proc/locks lists them:
// "1: POSIX  ADVISORY  READ 1234 fd:01:5678 128 128".
func holdsLock(t *testing.T, path string, off int64) bool {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ino := fi.Sys().(*syscall.Stat_t).Ino
	f, err := os.Open("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 8 || fs[1] != "POSIX" {
			continue
		}
		var pid int
		var inode uint64
		var start, end int64
		var endS string
		fmt.Sscan(fs[4], &pid)
		if id := strings.Split(fs[5], ":"); len(id) == 3 {
			fmt.Sscan(id[2], &inode)
		}
		fmt.Sscan(fs[6], &start)
		endS = fs[7]
		if endS == "EOF" {
			end = 1<<63 - 1
		} else {
			fmt.Sscan(endS, &end)
		}
		if pid == os.Getpid() && inode == ino && start <= off && off <= end {
			return true
		}
	}
	return false
}
