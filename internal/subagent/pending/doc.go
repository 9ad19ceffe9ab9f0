// Package pending is what reaches an agent between its turns while any of
// its background runs goes on (S-Q2): their notifications and the messages
// sent to it, from the queue and, with a mailbox, its inbox — the
// runner.Pending its conversation drains.
package pending
