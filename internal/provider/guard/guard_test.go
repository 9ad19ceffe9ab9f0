package guard

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The tests of the limits run in synctest bubbles: the watch's timers read
// the bubble's fake clock, which moves only when every goroutine of the
// test waits on a channel, so a limit passes at once and exactly.

// pipeBody is a response body the test feeds: each receive from chunks is
// one read's data; a closed chunks is the end of the body. A read also
// ends when ctx does, as a real body's does when its request is cancelled.
type pipeBody struct {
	ctx    context.Context
	chunks chan string
}

func (b *pipeBody) Read(p []byte) (int, error) {
	select {
	case c, ok := <-b.chunks:
		if !ok {
			return 0, io.EOF
		}
		return copy(p, c), nil
	case <-b.ctx.Done():
		return 0, context.Cause(b.ctx)
	}
}

func (b *pipeBody) Close() error { return nil }

// send runs a request through the watch's middleware: headers come when
// headers is closed, then the body is fed from chunks.
func send(ctx context.Context, w *Watch, headers chan struct{}, chunks chan string) (*http.Response, error) {
	req, _ := http.NewRequestWithContext(ctx, "POST", "http://x", nil)
	return w.Middleware(req, func(r *http.Request) (*http.Response, error) {
		select {
		case <-headers:
		case <-r.Context().Done():
			return nil, context.Cause(r.Context())
		}
		return &http.Response{StatusCode: 200, Body: &pipeBody{ctx: r.Context(), chunks: chunks}}, nil
	})
}

func stall(t *testing.T, err error) *StallError {
	t.Helper()
	var se *StallError
	if !errors.As(err, &se) {
		t.Fatalf("error = %v, want a *StallError", err)
	}
	return se
}

func TestFirstByteWithoutHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		ctx, w := Start(context.Background(), Limits{FirstByte: 30 * time.Millisecond, Idle: time.Hour})
		defer w.Stop()
		_, err := send(ctx, w, make(chan struct{}), nil)
		if se := stall(t, err); !se.FirstByte || se.Limit != 30*time.Millisecond {
			t.Errorf("stall = %+v, want the first-byte limit", se)
		}
		if waited := time.Since(start); waited != 30*time.Millisecond {
			t.Errorf("the stall came after %v on the bubble's clock, want exactly the limit", waited)
		}
		if !strings.Contains(w.Err().Error(), SettingFirstByte) {
			t.Errorf("error %q does not name %s", w.Err(), SettingFirstByte)
		}
	})
}

// Headers alone are not an answer: a server that sends them and then
// nothing has not started its reply.
func TestFirstByteAfterHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, w := Start(context.Background(), Limits{FirstByte: 30 * time.Millisecond, Idle: time.Hour})
		defer w.Stop()
		headers := make(chan struct{})
		close(headers)
		resp, err := send(ctx, w, headers, make(chan string))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		if se := stall(t, err); !se.FirstByte {
			t.Errorf("stall = %+v, want the first-byte limit", se)
		}
	})
}

func TestIdleMidStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, w := Start(context.Background(), Limits{FirstByte: time.Hour, Idle: 30 * time.Millisecond})
		defer w.Stop()
		headers := make(chan struct{})
		close(headers)
		chunks := make(chan string, 2)
		chunks <- "event: message_start\n\n"
		chunks <- "event: ping\n\n"
		resp, err := send(ctx, w, headers, chunks)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		if se := stall(t, err); se.FirstByte || se.Limit != 30*time.Millisecond {
			t.Errorf("stall = %+v, want the idle limit", se)
		}
		if string(got) != "event: message_start\n\nevent: ping\n\n" {
			t.Errorf("read %q before the stall, want both chunks", got)
		}
		if !strings.Contains(w.Err().Error(), SettingIdle) {
			t.Errorf("error %q does not name %s", w.Err(), SettingIdle)
		}
	})
}

// Time the consumer spends between reads is not the provider's silence.
func TestSlowConsumerIsNotIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 20 * time.Millisecond
		ctx, w := Start(context.Background(), Limits{FirstByte: time.Hour, Idle: idle})
		defer w.Stop()
		headers := make(chan struct{})
		close(headers)
		chunks := make(chan string, 3)
		chunks <- "a"
		chunks <- "b"
		chunks <- "c"
		close(chunks)
		resp, err := send(ctx, w, headers, chunks)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1)
		var got []byte
		for {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			// The consumer works on what it read for several idle limits: a
			// deliberate delay, part of the scenario, not a synchronisation
			// (and, in the bubble, no wall time).
			<-time.After(4 * idle)
		}
		if string(got) != "abc" || w.Err() != nil {
			t.Errorf("read %q, watch error %v; want the whole body and no stall", got, w.Err())
		}
	})
}

func TestStopEndsTheWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, w := Start(context.Background(), Limits{FirstByte: 10 * time.Millisecond})
		w.Stop()
		w.Stop()
		<-ctx.Done()
		if w.Err() != nil || !errors.Is(context.Cause(ctx), context.Canceled) {
			t.Errorf("after Stop: watch error %v, cause %v; want no stall and a plain cancellation", w.Err(), context.Cause(ctx))
		}
	})
}

func TestBudget(t *testing.T) {
	b := NewBudget(Limits{MaxReplyBytes: 10})
	if err := b.Add(6); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(4); err != nil {
		t.Fatalf("exactly the limit: %v", err)
	}
	err := b.Add(1)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 10 || !strings.Contains(err.Error(), SettingMaxReplyBytes) {
		t.Errorf("past the limit: %v, want a *TooLargeError naming %s", err, SettingMaxReplyBytes)
	}
	if got := NewBudget(Limits{}).max; got != DefaultMaxReplyBytes {
		t.Errorf("default budget %d, want %d", got, DefaultMaxReplyBytes)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{300: "300 bytes", 1536: "1.5 KiB", 8 << 20: "8 MiB", 3 << 30: "3 GiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
