// Package profiles picks the tool profile (DESIGN §12) that
// subagents.surface names: the one place that knows them all.
package profiles

import (
	"fmt"

	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/subagent/claude"
	"github.com/cadre-dev/cadre/internal/subagent/gateway"
	"github.com/cadre-dev/cadre/internal/subagent/harness"
	"github.com/cadre-dev/cadre/internal/subagent/opencode"
)

// For is the profile of this surface ("" is claude's).
func For(surface string) (subagent.NewProfile, error) {
	switch surface {
	case "", "claude":
		return claude.New, nil
	case "opencode":
		return opencode.New, nil
	case "harness":
		return harness.New, nil
	case "gateway":
		return gateway.New, nil
	}
	return nil, fmt.Errorf("subagents.surface %q is unknown: want claude, opencode, harness or gateway", surface)
}
