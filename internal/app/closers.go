package app

import "errors"

// closers is the undo of what New built, in the order it was built. Each
// part pushes its undo once it exists; unwind runs them last first, so a
// part is undone before what it uses.
type closers []func() error

func (c *closers) push(f func() error) { *c = append(*c, f) }

// unwind runs every undo, last pushed first, and empties the stack; it
// returns their errors joined. A second unwind does nothing.
func (c *closers) unwind() error {
	var errs []error
	for i := len(*c) - 1; i >= 0; i-- {
		errs = append(errs, (*c)[i]())
	}
	*c = nil
	return errors.Join(errs...)
}
