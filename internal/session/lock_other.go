//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd || solaris)

package session

import "os"

// lockWriter does nothing on systems without flock: there, two processes
// resuming one session at once are not kept apart (docs/security.md).
func lockWriter(*os.File) error { return nil }
