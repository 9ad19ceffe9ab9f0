//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package session

import (
	"errors"
	"os"

	"github.com/cadre-dev/cadre/internal/flock"
)

// lockWriter takes the exclusive flock of an open transcript, without
// waiting: ErrInUse when another open file holds it. A flock belongs to
// the open file, so the kernel drops it when its last descriptor closes,
// however the process ends: a SIGKILLed writer leaves a transcript that
// resumes. This is the mechanism of task.ClaimOwner, applied to the
// transcript itself, so no lock file can be left behind or go stale.
func lockWriter(f *os.File) error {
	if err := flock.TryExclusive(f); errors.Is(err, flock.ErrLocked) {
		return ErrInUse
	} else if err != nil {
		return err
	}
	return nil
}
