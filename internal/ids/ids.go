// Package ids makes cadre's own ids and checks the ids that come from
// outside — a session id given to --resume, a task id a model passes to
// TaskOutput, an agent id that names a worktree — before anything uses them
// to build a path or a git ref.
//
// New is the one source of fresh ids in the module; a test in this package
// fails if any other non-test file calls a uuid.New* function.
package ids

import (
	"fmt"

	"github.com/google/uuid"
)

// New returns a fresh time-ordered id: a UUIDv7 in its canonical 36-character
// lowercase form, so ids made later sort later as plain strings. Callers
// rely on that: session, agent and event ids are compared as time-ordered
// (the newest child is the greatest id).
//
// What happens when the sources it reads misbehave:
//   - The clock going backwards (or many ids within one millisecond) does
//     not break the order within a process: the uuid package remembers the
//     last timestamp it used and moves one step past it, so New's results are
//     strictly increasing for the life of the process, at worst running a
//     little ahead of the wall clock. Across processes the order is the wall
//     clock's, to the millisecond.
//   - The random source cannot fail quietly: crypto/rand, which the uuid
//     package reads, crashes the program rather than return an error (Go
//     1.24 and later), so there is no weaker fallback to document. uuid.Must
//     turns the error the signature still allows into a panic should that
//     ever change.
func New() string { return uuid.Must(uuid.NewV7()).String() }

// Derive returns the id that name stands for in namespace: a name-based
// UUID (version 5), the same for the same pair every time. It is not a
// fresh id and not time-ordered; it maps a name chosen outside cadre (an
// A2A context id that is not a UUID) onto an id cadre can use.
func Derive(namespace, name string) string {
	return uuid.NewSHA1(uuid.NewSHA1(uuid.NameSpaceURL, []byte("cadre:"+namespace)), []byte(name)).String()
}

// MaxLen is the longest id Check accepts.
const MaxLen = 128

// Check accepts 1 to MaxLen characters from [A-Za-z0-9_-]. That excludes
// separators and dots, so no id can climb out of a directory ("../x") or
// into a subfolder. A refusal wraps invalid, the caller's sentinel, and says
// what was wrong.
func Check(id string, invalid error) error {
	switch {
	case id == "":
		return fmt.Errorf("%w %q: it is empty", invalid, id)
	case len(id) > MaxLen:
		return fmt.Errorf("%w %.20q…: it is %d characters long, the limit is %d", invalid, id, len(id), MaxLen)
	}
	for i, c := range id {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			continue
		}
		return fmt.Errorf("%w %q: only letters, digits, '_' and '-' are allowed (found %q at byte %d)", invalid, id, c, i)
	}
	return nil
}
