// Package ids checks the ids that come from outside — a session id given to
// --resume, a task id a model passes to TaskOutput, an agent id that names a
// worktree — before anything uses them to build a path or a git ref.
package ids

import "fmt"

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
