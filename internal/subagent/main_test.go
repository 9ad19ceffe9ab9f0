package subagent

import (
	"flag"
	"testing"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite golden files")

// The loop runs parallel spawn calls in goroutines, and children block in
// their models in some tests: none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
