package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/task"
)

// cutProxy is a TCP proxy in front of the test server that a test can cut,
// as a restarting server is cut off: cut closes every connection through
// it and refuses (accepts and closes at once) every new one until mend.
// refused is signalled at each refused connection, so a test can wait for
// a client to have tried, and failed, while the server was away.
type cutProxy struct {
	ln      net.Listener
	target  string
	refused chan struct{}

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newCutProxy proxies to the host:port of url and returns the proxy and
// url pointed at it.
func newCutProxy(t *testing.T, rawURL string) (*cutProxy, string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: u.Host, refused: make(chan struct{}, 1024), conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *cutProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			select {
			case p.refused <- struct{}{}:
			default:
			}
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns[c], p.conns[s] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		p.wg.Go(func() { pipe(s, c) })
		p.wg.Go(func() { pipe(c, s) })
	}
}

// cut closes every open connection and refuses new ones until mend.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *cutProxy) mend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

func (p *cutProxy) close() {
	p.ln.Close()
	p.cut()
	p.wg.Wait()
}

// awaitRefused waits until n connections were refused since the last
// wait, failing the test after a minute.
func (p *cutProxy) awaitRefused(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for range n {
		select {
		case <-p.refused:
		case <-deadline:
			t.Fatal("no connection attempt reached the cut proxy within a minute")
		}
	}
}

// TestRetryThroughABlip: with the server cut off, a record update, a
// transcript append and a read each wait; once the connection is back they
// complete, and the append is stored exactly once.
func TestRetryThroughABlip(t *testing.T) {
	proxy, url := newCutProxy(t, pg.URL(t))
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
	proxy, url := newCutProxy(t, pg.URL(t))
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
	proxy, url := newCutProxy(t, pg.URL(t))
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
