package harness

import (
	"testing"

	"go.uber.org/goleak"
)

// The profile's tools start goroutines of their own (wait_async_results'
// waiters, a team's forgetting when its tree ends): none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
