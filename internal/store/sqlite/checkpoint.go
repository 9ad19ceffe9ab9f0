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
// this goroutine runs a PASSIVE checkpoint on a connection of its own, which
// neither waits for nor blocks the writer. A short run never reaches the
// threshold and makes no checkpoint; Close makes none either (sqlite.go),
// so the next process counts what is left in the WAL (walBacklog).
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

// backlogFrames is how many WAL frames (pages) left by earlier processes
// make Open ask for a checkpoint: 128 frames are 0.5 MiB, what a few dozen
// short runs write. Fewer would checkpoint (two fsyncs) more often; more
// would make every start index a longer WAL.
const backlogFrames = 128

// walBacklog is the number of frames in the WAL that no checkpoint copied
// back yet, left by earlier processes (Close does not checkpoint), as a
// NOOP checkpoint reports it: the WAL's frames less those backfilled. It
// asks SQLite rather than reading the -shm file's header itself: opening
// and closing a descriptor of the -shm file would drop every POSIX lock
// this process holds on it, SQLite's included, and let another process
// truncate the wal-index under this one's mapping
// (TestOpenKeepsTheSharedMemoryLock). Any error reads as 0: the figure
// only decides when the next checkpoint runs.
func (db *DB) walBacklog(ctx context.Context) int {
	var busy, frames, backfilled int
	if err := db.w.QueryRowContext(ctx, `PRAGMA wal_checkpoint(NOOP)`).Scan(&busy, &frames, &backfilled); err != nil || backfilled >= frames {
		return 0
	}
	return frames - backfilled
}
