//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris)

package task

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ClaimOwner creates dir if needed and claims a new owner id in it by
// creating its lock file.
//
// On this system cadre has no flock: an owner counts as alive for as long
// as its lock file exists. Close removes it; a process that dies without
// closing leaves it behind, and its tasks stay pending or running until the
// file is deleted by hand (then the next Recover fails them).
func ClaimOwner(dir string) (*Owner, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("claim task owner: %w", err)
	}
	id, err := newOwnerID()
	if err != nil {
		return nil, fmt.Errorf("claim task owner: %w", err)
	}
	o := &Owner{dir: dir, id: id}
	o.f, err = os.OpenFile(o.lockPath(), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("claim task owner: %w", err)
	}
	return o, nil
}

// Alive reports whether the lock file of ownerID exists in dir (see
// ClaimOwner for why that is all this system can tell). An invalid ownerID
// is never alive.
func Alive(dir, ownerID string) bool {
	if ValidateID(ownerID) != nil {
		return false
	}
	_, err := os.Stat(lockPath(dir, ownerID))
	return !errors.Is(err, fs.ErrNotExist)
}

// Ended reports whether the owner ownerID claimed its lock in dir and has
// since ended. This system cannot tell an ended owner's file from a live
// one's, so it never says so.
func Ended(dir, ownerID string) bool { return false }

// release closes the file before removing it: some systems (Windows) refuse
// to remove an open file.
func (o *Owner) release() error {
	return errors.Join(o.f.Close(), o.removeLockFile())
}
