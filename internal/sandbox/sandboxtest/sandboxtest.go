// Package sandboxtest holds the test helpers of package sandbox.
package sandboxtest

import (
	"net"
	"os"
	"testing"

	"github.com/cadre-dev/cadre/internal/sandbox"
)

// Require skips t with SKIPPED, NOT TESTED when this machine cannot
// sandbox commands (no Landlock, no mount namespaces), and fails it
// instead under CI=true, where the walls must be tested. launcher is the
// binary that will set the walls up.
func Require(t testing.TB, launcher string) sandbox.Status {
	t.Helper()
	st := sandbox.Probe(launcher)
	if st.Available() {
		return st
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("sandbox: unavailable under CI, where its walls must be tested: %s", st.Reason)
	}
	t.Skipf("SKIPPED, NOT TESTED: the sandbox is unavailable here: %s", st.Reason)
	return st
}

// Listen listens on 127.0.0.1 until t ends and returns its port and a
// channel that receives once for each connection it accepted (up to 16
// waiting): what a test of the network wall asks is whether anything got
// through.
func Listen(t testing.TB) (port int, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	acc, done := make(chan struct{}, 16), make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			select {
			case acc <- struct{}{}:
			default:
			}
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().(*net.TCPAddr).Port, acc
}
