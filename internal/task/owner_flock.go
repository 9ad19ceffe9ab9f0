//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris

package task

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cadre-dev/cadre/internal/flock"
)

// ClaimOwner creates dir if needed and claims a new owner id in it, holding
// the exclusive flock on its lock file until Close or the process's end. The
// kernel releases a flock when its last file descriptor closes, however the
// process dies, so a SIGKILLed cadre leaves a file anyone can lock: dead.
// The descriptor is close-on-exec, so commands cadre starts (which may
// outlive it) do not keep it alive.
func ClaimOwner(dir string) (*Owner, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("claim task owner: %w", err)
	}
	id, err := newOwnerID()
	if err != nil {
		return nil, fmt.Errorf("claim task owner: %w", err)
	}
	// The file is locked under a temporary name and then renamed into place:
	// a lock file that Alive can find is always already locked. Locking it
	// after creating it under its final name would leave a window in which
	// Alive takes the lock, judges the owner dead and removes the file.
	f, err := os.CreateTemp(dir, ".claim-*")
	if err != nil {
		return nil, fmt.Errorf("claim task owner: %w", err)
	}
	fail := func(err error) (*Owner, error) {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("claim task owner in %s: %w", dir, err)
	}
	if err := flock.TryExclusive(f); err != nil {
		return fail(fmt.Errorf("lock %s: %w", f.Name(), err))
	}
	o := &Owner{dir: dir, id: id, f: f}
	if err := os.Rename(f.Name(), o.lockPath()); err != nil {
		return fail(err)
	}
	return o, nil
}

// Alive reports whether the owner ownerID in dir still holds its lock. It is
// false when no lock file exists or when its lock can be taken; then the
// owner is gone, and Alive removes its file (still holding the lock, so a
// concurrent Alive cannot mistake a half-removed file for anything else).
// An invalid ownerID (empty, or one that would build a path outside dir) is
// never alive. When the file cannot be examined (permissions, say), Alive
// answers true: calling a live owner dead would fail its running tasks.
func Alive(dir, ownerID string) bool {
	if ValidateID(ownerID) != nil {
		return false
	}
	path := lockPath(dir, ownerID)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	} else if err != nil {
		return true
	}
	defer f.Close()
	if err := flock.TryExclusive(f); err != nil {
		return true // EWOULDBLOCK: the owner holds it; anything else: cannot tell
	}
	os.Remove(path)
	return false
}

// Ended reports whether the owner ownerID claimed its lock in dir and has
// since ended: its lock file is there and its lock can be taken (then
// Ended removes the file, as Alive does). Unlike Alive it says nothing of
// an owner with no file here, which may be running on another machine.
func Ended(dir, ownerID string) bool {
	if ValidateID(ownerID) != nil {
		return false
	}
	if _, err := os.Stat(lockPath(dir, ownerID)); err != nil {
		return false
	}
	return !Alive(dir, ownerID)
}

// release removes the lock file, then unlocks: while the file is linked it
// stays locked, so no Alive can find a lockable file of a closing owner.
func (o *Owner) release() error {
	return errors.Join(o.removeLockFile(), o.f.Close())
}
