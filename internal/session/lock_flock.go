//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package session

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockWriter takes the exclusive flock of an open transcript, without
// waiting: ErrInUse when another open file holds it. A flock belongs to
// the open file, so the kernel drops it when its last descriptor closes,
// however the process ends: a SIGKILLed writer leaves a transcript that
// resumes. This is the mechanism of task.ClaimOwner, applied to the
// transcript itself, so no lock file can be left behind or go stale.
func lockWriter(f *os.File) error {
	conn, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var opErr error
	err = conn.Control(func(fd uintptr) {
		for {
			opErr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB)
			if opErr != unix.EINTR {
				return
			}
		}
	})
	if errors.Is(opErr, unix.EWOULDBLOCK) {
		return ErrInUse
	}
	return errors.Join(err, opErr)
}
