package postgres

import (
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// proxy is a TCP proxy in front of the test server that counts round
// trips and that a test can cut, as a restarting server is cut off.
//
// A round trip: on each connection, a write of the client's that follows
// an answer of the server's (or opens the connection) starts one; several
// writes with no answer in between (a pipelined batch) are one, as the
// client waits once for them. cut closes every connection through the
// proxy and refuses (accepts and closes at once) every new one until mend;
// refused is signalled at each refusal, so a test can wait for a client to
// have tried, and failed, while the server was away.
type proxy struct {
	ln      net.Listener
	target  string
	refused chan struct{}
	wg      sync.WaitGroup

	mu    sync.Mutex
	trips int
	down  bool
	conns map[net.Conn]struct{}
}

// newProxy proxies to the host:port of rawURL and returns the proxy and
// the URL pointed at it.
func newProxy(t *testing.T, rawURL string) (*proxy, string) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: u.Host, refused: make(chan struct{}, 1024), conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	u.Host = ln.Addr().String()
	return p, u.String()
}

func (p *proxy) accept() {
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
		// answered is whether the server spoke since the client last
		// did: the client's next write then starts a round trip.
		var (
			mu       sync.Mutex
			answered = true
		)
		p.wg.Go(func() {
			pipe(s, c, func() {
				mu.Lock()
				defer mu.Unlock()
				if answered {
					p.mu.Lock()
					p.trips++
					p.mu.Unlock()
					answered = false
				}
			})
		})
		p.wg.Go(func() {
			pipe(c, s, func() {
				mu.Lock()
				answered = true
				mu.Unlock()
			})
		})
	}
}

// pipe copies src to dst, calling read before passing on each read, until
// either side fails; then it closes both.
func pipe(dst, src net.Conn, read func()) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			read()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// count returns the round trips since the last count.
func (p *proxy) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.trips
	p.trips = 0
	return n
}

// cut closes every open connection and refuses new ones until mend.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) mend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

func (p *proxy) close() {
	p.ln.Close()
	p.cut()
	p.wg.Wait()
}

// awaitRefused waits until n connections were refused since the last
// wait, failing the test after a minute.
func (p *proxy) awaitRefused(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(time.Minute)
	for range n {
		select {
		case <-p.refused:
		case <-deadline:
			t.Fatal("no connection attempt reached the proxy within a minute")
		}
	}
}
