package subagent_test

import (
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/profiles"
)

// The core's tests spawn through the profiles' tools (export_test.go).
func init() { subagent.SetProfiles(profiles.For) }
