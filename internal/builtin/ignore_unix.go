//go:build unix

package builtin

import (
	"os"
	"syscall"
)

// openNoFollow opens p for reading unless it is a symbolic link; a FIFO
// opens without waiting for a writer.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
