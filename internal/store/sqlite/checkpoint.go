package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// checkpointEvery is how many committed writes make the checkpointer copy
// the WAL back into the database. SQLite's own default (wal_autocheckpoint)
// is 1,000 pages; a write touches a row's page and its indexes' (the tasks
// table has five), so a few hundred writes is of the same order.
const checkpointEvery = 256

// checkpointer moves checkpoints off the commit path. SQLite's automatic
// checkpoint runs inside the COMMIT that crosses wal_autocheckpoint, on the
// committing connection, and it is where a WAL database fsyncs with
// synchronous=NORMAL: the writer that happened to cross the line paid for
// every write before it. The writer connection has it off
// (wal_autocheckpoint=0); instead, after checkpointEvery committed writes,
// this goroutine runs a PASSIVE checkpoint on a reader connection, which
// neither waits for nor blocks the writer. A short run never reaches the
// threshold and makes no checkpoint until Close, when SQLite checkpoints
// as the last connection to the file closes.
type checkpointer struct {
	db *sql.DB

	mu      sync.Mutex
	pending int // writes committed since the last nudge

	nudge chan struct{} // cap 1
	stop  chan struct{}
	ended chan struct{}
	// ran, if not nil, sees each checkpoint's outcome (tests).
	ran func(error)
}

func newCheckpointer(db *sql.DB, ran func(error)) *checkpointer {
	c := &checkpointer{db: db, ran: ran, nudge: make(chan struct{}, 1), stop: make(chan struct{}), ended: make(chan struct{})}
	go c.run()
	return c
}

// written tells the checkpointer that n more writes were committed.
func (c *checkpointer) written(n int) {
	c.mu.Lock()
	c.pending += n
	due := c.pending >= checkpointEvery
	if due {
		c.pending = 0
	}
	c.mu.Unlock()
	if due {
		select {
		case c.nudge <- struct{}{}:
		default: // one is already due
		}
	}
}

func (c *checkpointer) run() {
	defer close(c.ended)
	for {
		select {
		case <-c.stop:
			return
		case <-c.nudge:
		}
		// Best effort: a checkpoint that fails (another process's
		// reader holds the WAL's start) is retried on the next nudge,
		// and SQLite checkpoints on close anyway.
		_, err := c.db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
		if c.ran != nil {
			c.ran(err)
		}
	}
}

// close stops the checkpointer, waiting for a checkpoint in progress.
func (c *checkpointer) close() {
	close(c.stop)
	<-c.ended
}
