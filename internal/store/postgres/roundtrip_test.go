package postgres

import (
	"fmt"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

// countProxy is a TCP proxy in front of the test server that counts round
// trips: on each connection, a write of the client's that follows an
// answer of the server's (or opens the connection) starts one. Several
// writes of the client with no answer in between (a pipelined batch) are
// one round trip, as the client waits once for them.
type countProxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu    sync.Mutex
	trips int
	conns []net.Conn
}

// newCountProxy proxies to the host:port of rawURL and returns the proxy
// and the URL pointed at it.
func newCountProxy(t *testing.T, rawURL string) (*countProxy, string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &countProxy{ln: ln, target: u.Host}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *countProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		// answered is whether the server spoke since the client last
		// did: the client's next write then starts a round trip.
		var (
			mu       sync.Mutex
			answered = true
		)
		p.wg.Go(func() {
			defer s.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					mu.Lock()
					if answered {
						p.mu.Lock()
						p.trips++
						p.mu.Unlock()
						answered = false
					}
					mu.Unlock()
					if _, werr := s.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		})
		p.wg.Go(func() {
			defer c.Close()
			buf := make([]byte, 64<<10)
			for {
				n, err := s.Read(buf)
				if n > 0 {
					mu.Lock()
					answered = true
					mu.Unlock()
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		})
	}
}

// count returns the round trips since the last count.
func (p *countProxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.trips
	p.trips = 0
	return n
}

func (p *countProxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// TestMailboxRoundTrips: a run's inbox costs one round trip to open (which
// also says whether messages wait) and one to close, whether it closes or
// hands back what waits.
func TestMailboxRoundTrips(t *testing.T) {
	proxy, url := newCountProxy(t, pg.URL(t))
	mb := open(t, url).Mailbox()
	ctx := t.Context()
	// Each statement's first use on a connection prepares it (a round
	// trip of pgx's statement cache): one inbox's life first.
	if _, err := mb.Open(ctx, "warm", "o"); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.CloseIfEmpty(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		do   func() error
		want int
	}{
		{"open", func() error { _, err := mb.Open(ctx, "a1", "o"); return err }, 1},
		{"push", func() error { _, err := mb.Push(ctx, msgFor("a1")); return err }, -1},
		{"close with a message waiting", func() error {
			es, err := mb.CloseIfEmpty(ctx, "a1")
			if err == nil && len(es) != 1 {
				t.Errorf("close handed back %d messages, want 1", len(es))
			}
			return err
		}, 1},
		{"close", func() error {
			es, err := mb.CloseIfEmpty(ctx, "a1")
			if err == nil && len(es) != 0 {
				t.Errorf("close handed back %d messages, want none", len(es))
			}
			return err
		}, 1},
	} {
		proxy.count()
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n := proxy.count(); c.want >= 0 && n != c.want {
			t.Errorf("%s took %d round trips, want %d", c.name, n, c.want)
		}
	}
	if ok, err := mb.Push(ctx, msgFor("a1")); ok || err != nil {
		t.Errorf("push after the close: %v, %v; want refused", ok, err)
	}
}

// TestCreateSessionTaskOneRoundTrip: a background child's two records
// are created in one round trip (one statement).
func TestCreateSessionTaskOneRoundTrip(t *testing.T) {
	proxy, url := newCountProxy(t, pg.URL(t))
	db := open(t, url)
	for i := range 3 {
		id := fmt.Sprintf("c%d", i)
		proxy.count()
		if err := db.CreateSessionTask(t.Context(), info(id), tasktest.Sample(id)); err != nil {
			t.Fatal(err)
		}
		// The first prepares the statement on its connection.
		if n := proxy.count(); i > 0 && n != 1 {
			t.Errorf("CreateSessionTask took %d round trips, want 1", n)
		}
	}
}
