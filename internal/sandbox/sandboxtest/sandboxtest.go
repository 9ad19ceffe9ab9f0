// Package sandboxtest holds the test helpers of package sandbox.
package sandboxtest

import (
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
