package postgres

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DefaultRetryFor bounds how long the store keeps retrying one read or
// write through a connection failure it expects to pass (retryable): a
// server restarting, failing over, or refusing connections while it starts.
// A PostgreSQL restart of a few seconds then costs the run a pause; a
// server still gone after this long fails the operation as it would have
// failed at once (docs/scaling.md, "A database that goes away").
const DefaultRetryFor = 30 * time.Second

// The wait between two attempts: short at first (a terminated backend or
// a pooled connection the restart closed is usually replaced at once),
// doubling up to retryMost, so a server that stays down for the whole
// bound is asked about every two seconds, not hammered.
const (
	retryFirst = 20 * time.Millisecond
	retryMost  = 2 * time.Second
)

// WithRetryFor sets how long a read or write is retried through transient
// connection failures (DefaultRetryFor without it); 0 or less retries
// nothing.
func WithRetryFor(d time.Duration) Option {
	return func(o *options) { o.retryFor = d }
}

// retryable reports whether err is a failure of the connection or of the
// server's availability, after which the same operation may succeed once
// the server is back. A statement that may have been executed (the connection broke
// after it was sent, before an answer) is retryable only when it is
// idempotent; an error the server answered with executed nothing.
func retryable(err error, idempotent bool) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// The server answered: the statement did not commit.
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08", // connection exception
			pgErr.Code == "57P01", // admin_shutdown: a fast or smart shutdown
			pgErr.Code == "57P02", // crash_shutdown
			pgErr.Code == "57P03": // cannot_connect_now: starting up, or in recovery
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) || pgconn.SafeToRetry(err) {
		return true // nothing was sent
	}
	if !idempotent {
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || isConnClosed(err)
}

// Transient reports whether err is a passing failure of the connection or
// of the server's availability (a restart, a failover) after which an
// idempotent operation may be tried again, as the store's own retries do
// for up to DefaultRetryFor.
func Transient(err error) bool { return retryable(err, true) }

// isConnClosed is pgx's error for a statement on a connection that a
// failure closed before it.
func isConnClosed(err error) bool {
	return err != nil && err.Error() == "conn closed"
}

// ambiguous marks the error of a commit whose outcome is unknown: the
// connection broke after COMMIT was sent and before the server answered.
// Such a transaction is not run again (it may have committed).
type ambiguous struct{ err error }

func (e ambiguous) Error() string { return e.err.Error() }
func (e ambiguous) Unwrap() error { return e.err }

// retry runs fn until it succeeds, fails for a reason that is not a
// passing connection failure (retryable), ctx ends, or db's retry bound
// has passed since the first attempt; it returns fn's last error. Each
// attempt gets the attempt number (0 first), so that a statement that is
// not idempotent can first check whether an earlier attempt, whose answer
// was lost, did its work.
func (db *DB) retry(ctx context.Context, idempotent bool, fn func(ctx context.Context, attempt int) error) error {
	return retryFor(ctx, db.retryFor, db.log, idempotent, fn)
}

// Retry runs fn, an idempotent operation on the database, again through
// passing connection failures (Transient) for up to DefaultRetryFor, with
// the store's own waits: what runs beside the store on its server (River's
// migrations) rides out a restart as the store's statements do.
func Retry(ctx context.Context, log *slog.Logger, fn func(ctx context.Context) error) error {
	return retryFor(ctx, DefaultRetryFor, log, true, func(ctx context.Context, _ int) error { return fn(ctx) })
}

func retryFor(ctx context.Context, bound time.Duration, log *slog.Logger, idempotent bool, fn func(ctx context.Context, attempt int) error) error {
	var deadline time.Time
	wait := time.Duration(0)
	for attempt := 0; ; attempt++ {
		err := fn(ctx, attempt)
		var amb ambiguous
		if err == nil || errors.As(err, &amb) || !retryable(err, idempotent) || ctx.Err() != nil || bound <= 0 {
			return err
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(bound)
		}
		if !now.Before(deadline) {
			return err
		}
		// The last wait ends at the bound, for one attempt there.
		wait = min(max(2*wait, retryFirst), retryMost, deadline.Sub(now))
		if attempt == 0 {
			log.WarnContext(ctx, "PostgreSQL connection failed; retrying", "retry_for", bound, "err", oneLine{err})
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// inTx runs fn in a transaction, committed if fn returns nil and rolled
// back otherwise. A transaction that fails on a passing connection failure
// before its commit is run again from the start (fn must read what it
// changes inside the transaction, as every caller does), within the retry
// bound; one whose commit's outcome is unknown is not.
func (db *DB) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return db.retry(ctx, true, func(ctx context.Context, _ int) error {
		tx, err := db.pool.Begin(ctx)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			_ = tx.Rollback(rctx) // the error is fn's; a broken connection is discarded by the pool
			return err
		}
		err = tx.Commit(ctx)
		var pgErr *pgconn.PgError
		if err != nil && !errors.As(err, &pgErr) && !pgconn.SafeToRetry(err) {
			return ambiguous{err}
		}
		return err
	})
}

// exec runs one statement through the pool, retried as retry says.
func (db *DB) exec(ctx context.Context, idempotent bool, sql string, args ...any) (pgconn.CommandTag, error) {
	var tag pgconn.CommandTag
	err := db.retry(ctx, idempotent, func(ctx context.Context, _ int) (err error) {
		tag, err = db.pool.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

// queryRow runs a query of one row through the pool and scans it with
// scan, retried as a read (reads are idempotent).
func (db *DB) queryRow(ctx context.Context, scan func(pgx.Row) error, sql string, args ...any) error {
	return db.retry(ctx, true, func(ctx context.Context, _ int) error {
		return scan(db.pool.QueryRow(ctx, sql, args...))
	})
}

// query runs a query through the pool and hands its rows to each, retried
// as a read: each must start over when called again (reset what it
// gathered).
func (db *DB) query(ctx context.Context, each func(pgx.Rows) error, sql string, args ...any) error {
	return db.retry(ctx, true, func(ctx context.Context, _ int) error {
		rows, err := db.pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		if err := each(rows); err != nil {
			return err
		}
		return rows.Err()
	})
}
