package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A read-modify-write of a record is a transaction of four round trips
// when each statement waits for its answer: BEGIN, the row read FOR
// UPDATE, the UPDATE, COMMIT (six for a session and its task). pgx's
// batches send several statements at once, so rmw takes two: BEGIN with
// the reads, then the writes with COMMIT. The row locks, and so the
// guarantees of doc.go, are the same.

// rmw runs one read-modify-write transaction: reads queues the reads
// (after BEGIN), scan reads their results, writes queues the writes
// (before COMMIT) or returns an error that rolls everything back. Like
// inTx it is run again through a passing connection failure before its
// commit, and not after a commit whose answer was lost.
func (db *DB) rmw(ctx context.Context, reads func(*pgx.Batch), scan func(pgx.BatchResults) error, writes func(*pgx.Batch) error) error {
	return db.retry(ctx, true, func(ctx context.Context, _ int) error {
		conn, err := db.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		reads(b)
		br := conn.SendBatch(ctx, b)
		_, err = br.Exec()
		if err == nil {
			err = scan(br)
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			w := &pgx.Batch{}
			if err = writes(w); err == nil {
				w.Queue("COMMIT")
				if err = sendAll(ctx, conn, w); mayHaveCommitted(err) {
					rollback(conn)
					return ambiguous{err}
				}
			}
		}
		if err != nil {
			rollback(conn)
		}
		return err
	})
}

// tx1 runs a transaction in one round trip: BEGIN, the statements queue
// adds, and COMMIT go in one pgx batch; scan reads the statements'
// results (BEGIN's is read before it). For a transaction whose writes do
// not depend on what it reads in Go: its conditions are in its SQL. A
// statement's error aborts the transaction (the server skips the rest, the
// COMMIT included) and is returned. scan's own error (a row it cannot
// read) comes after the COMMIT was sent: it does not undo the writes. Through a passing connection failure
// it is run again, unless the batch may have reached the server: its
// COMMIT may then have been executed, and the error is returned
// (ambiguous), not retried.
func (db *DB) tx1(ctx context.Context, queue func(*pgx.Batch), scan func(pgx.BatchResults) error) error {
	return db.retry(ctx, true, func(ctx context.Context, _ int) error {
		conn, err := db.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		b := &pgx.Batch{}
		b.Queue("BEGIN")
		queue(b)
		b.Queue("COMMIT")
		br := conn.SendBatch(ctx, b)
		_, err = br.Exec()
		if err == nil {
			err = scan(br)
		}
		if err == nil {
			_, err = br.Exec() // COMMIT
		}
		if cerr := br.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			return nil
		}
		rollback(conn)
		if mayHaveCommitted(err) {
			return ambiguous{err}
		}
		return err
	})
}

// mayHaveCommitted reports whether err, from a batch that ends in COMMIT,
// leaves open whether the COMMIT ran: not an error the server answered
// with, and not one pgx knows happened before anything was sent.
func mayHaveCommitted(err error) bool {
	var pgErr *pgconn.PgError
	return err != nil && !errors.As(err, &pgErr) && !pgconn.SafeToRetry(err)
}

// sendAll sends b and reads every result, through the query's own
// callback where it has one (QueuedQuery.QueryRow), returning the first
// error.
func sendAll(ctx context.Context, conn *pgxpool.Conn, b *pgx.Batch) error {
	br := conn.SendBatch(ctx, b)
	var err error
	for _, q := range b.QueuedQueries {
		if q.Fn != nil {
			err = q.Fn(br)
		} else {
			_, err = br.Exec()
		}
		if err != nil {
			break
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// rollback ends a failed transaction on conn; a connection that cannot is
// closed, so that the pool does not hand it out inside a transaction.
func rollback(conn *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		conn.Conn().Close(ctx)
	}
}
