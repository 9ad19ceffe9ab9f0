package subagent

import (
	"testing"

	"go.uber.org/goleak"
)

// The loop runs parallel spawn calls in goroutines, and children block in
// their models in some tests: none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
