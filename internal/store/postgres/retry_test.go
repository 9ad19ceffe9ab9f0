package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// TestRetryThroughABlip: with the server cut off, a record update, a
// transcript append and a read each wait; once the connection is back they
// complete, and the append is stored exactly once.
func TestRetryThroughABlip(t *testing.T) {
	proxy, url := newProxy(t, pg.URL(t))
	db := open(t, url)
	ctx := t.Context()
	if err := db.RegisterNode(ctx, "node-1", "test", 1); err != nil {
		t.Fatal(err)
	}
	tk := task.Task{ID: "task-1", Kind: task.KindLocalAgent, Status: task.StatusRunning, Created: time.Now()}
	if err := db.CreateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	w, err := db.Transcripts("node-1", time.Minute).Create(ctx, "s-1", true)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	proxy.cut()
	var (
		wg                 sync.WaitGroup
		updErr, appErr, rd error
	)
	wg.Go(func() {
		_, updErr = db.UpdateTask(ctx, tk.ID, func(t *task.Task) error { t.Result = "done"; return nil })
	})
	wg.Go(func() { appErr = w.Append(userEntry("s-1", "through the blip")) })
	wg.Go(func() { _, rd = db.GetTask(ctx, tk.ID) })
	// Every caller has found the server gone at least once (each
	// retries at least twice in the first 100 ms).
	proxy.awaitRefused(t, 6)
	proxy.mend()
	wg.Wait()
	if err := errors.Join(updErr, appErr, rd); err != nil {
		t.Fatalf("through a blip: %v", err)
	}
	got, err := db.GetTask(ctx, tk.ID)
	if err != nil || got.Result != "done" {
		t.Fatalf("after the blip the task's result is %q (%v), want done", got.Result, err)
	}
	entries, _, err := db.Transcripts("node-1", time.Minute).Read(ctx, session.Info{ID: "s-1"})
	if err != nil || len(entries) != 1 {
		t.Fatalf("after the blip the transcript has %d entries (%v), want 1", len(entries), err)
	}
}

// TestRetryIsBounded: a server that stays away longer than the retry
// bound fails the operation with the connection's error, after about the
// bound.
func TestRetryIsBounded(t *testing.T) {
	proxy, url := newProxy(t, pg.URL(t))
	const bound = 300 * time.Millisecond
	db, err := Open(t.Context(), url, WithRetryFor(bound))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	proxy.cut()
	start := time.Now()
	_, err = db.GetTask(t.Context(), "task-1")
	took := time.Since(start)
	if err == nil || errors.Is(err, task.ErrNotFound) {
		t.Fatalf("GetTask with the server away: %v, want a connection error", err)
	}
	if took < bound/2 || took > bound+5*time.Second {
		t.Errorf("GetTask gave up after %s, want about %s", took, bound)
	}
}

// TestRetryable: which errors are a passing connection failure.
func TestRetryable(t *testing.T) {
	for _, c := range []struct {
		name       string
		err        error
		idempotent bool
		want       bool
	}{
		{"canceled", context.Canceled, true, false},
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, false, true},
		{"starting up", &pgconn.PgError{Code: "57P03"}, false, true},
		{"connection exception", &pgconn.PgError{Code: "08006"}, false, true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, true, false},
		{"EOF after sending, idempotent", io.ErrUnexpectedEOF, true, true},
		{"EOF after sending, not idempotent", io.ErrUnexpectedEOF, false, false},
		{"refused", &net.OpError{Op: "dial", Err: errors.New("connection refused")}, true, true},
		{"plain", errors.New("boom"), true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := retryable(c.err, c.idempotent); got != c.want {
				t.Errorf("retryable(%v, %v) = %v, want %v", c.err, c.idempotent, got, c.want)
			}
		})
	}
}

// TestOpenDoesNotRetry: a server that cannot be reached at start fails
// Open at once, not after the retry bound.
func TestOpenDoesNotRetry(t *testing.T) {
	proxy, url := newProxy(t, pg.URL(t))
	proxy.cut()
	start := time.Now()
	db, err := Open(t.Context(), url)
	if err == nil {
		db.Close()
		t.Fatal("Open with the server cut off succeeded")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Open with the server cut off failed after %s, want at once", took)
	}
}
