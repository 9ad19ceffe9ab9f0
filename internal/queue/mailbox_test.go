package queue_test

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/queue"
	"github.com/cadre-dev/cadre/internal/queue/queuetest"
)

// One memory mailbox stands for the store every handle shares.
func TestMailboxConformance(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) func() queuetest.Mailbox {
		m := &queue.Mailbox{}
		return func() queuetest.Mailbox { return m }
	})
}
