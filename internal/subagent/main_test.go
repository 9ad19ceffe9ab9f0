package subagent

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/pgtest"
)

// pg is a throwaway PostgreSQL server, started by the first test that asks
// for a database (transcripts kept in a store).
var pg pgtest.Server

// The loop runs parallel spawn calls in goroutines, and children block in
// their models in some tests: none may outlive a test (pg.Main checks, as
// goleak.VerifyTestMain does, and stops the server).
func TestMain(m *testing.M) { pg.Main(m) }
