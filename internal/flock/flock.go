//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package flock

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// ErrLocked is returned by TryExclusive when another open file holds the
// lock.
var ErrLocked = errors.New("locked by another open file")

// TryExclusive takes f's exclusive lock without waiting: ErrLocked when
// another open file holds it. A signal that interrupts the call is retried.
func TryExclusive(f *os.File) error {
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
		return ErrLocked
	}
	return errors.Join(err, opErr)
}
