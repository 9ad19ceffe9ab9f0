//go:build aix || darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris || zos

package cli

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// terminalWidth returns the width in columns of the terminal w writes to, or
// 0 when w is not a terminal or does not say.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	// SyscallConn rather than Fd: Fd would switch the file to blocking mode.
	rc, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	cols := 0
	_ = rc.Control(func(fd uintptr) {
		if ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ); err == nil {
			cols = int(ws.Col)
		}
	})
	return cols
}
