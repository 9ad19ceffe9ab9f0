package task

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// Owner is this process's claim to be alive: an exclusive lock on
// <dir>/<id>.lock, held from ClaimOwner until Close or the process's end.
// Tasks the process executes record its ID in Task.Owner, and Alive tells
// any other process whether that owner still runs.
type Owner struct {
	dir, id string
	f       *os.File // holds the lock while open

	closeOnce sync.Once
	closeErr  error
}

// ID is the owner id to record in Task.Owner.
func (o *Owner) ID() string { return o.id }

// Close releases the lock and removes the lock file. After Close, Alive
// reports the owner dead, so Recover fails any task of it still unfinished.
// Calling Close again returns the first call's result.
func (o *Owner) Close() error {
	o.closeOnce.Do(func() {
		if err := o.release(); err != nil {
			o.closeErr = fmt.Errorf("release task owner %s: %w", o.id, err)
		}
	})
	return o.closeErr
}

// removeLockFile removes o's lock file; one already gone is no error.
func (o *Owner) removeLockFile() error {
	if err := os.Remove(o.lockPath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (o *Owner) lockPath() string { return lockPath(o.dir, o.id) }

func lockPath(dir, ownerID string) string {
	return filepath.Join(dir, ownerID+".lock")
}

// newOwnerID is the pid, for people reading an error message, plus 64
// random bits, for uniqueness: liveness never depends on the pid, which the
// system reuses.
func newOwnerID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:])), nil
}
