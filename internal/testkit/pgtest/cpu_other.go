//go:build !linux

package pgtest

import (
	"errors"
	"time"
)

// CPU is the processor time the server's processes have used so far; it
// reads /proc, so only on Linux.
func (s *Server) CPU() (time.Duration, error) {
	return 0, errors.New("pgtest: the server's CPU time is read from /proc, on Linux only")
}
