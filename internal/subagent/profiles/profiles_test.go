package profiles

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/subagent"
)

// TestUnknownSurface: a surface no profile has is refused, naming the
// ones there are; each known one builds its tools' profile.
func TestUnknownSurface(t *testing.T) {
	_, err := For("bogus")
	if err == nil || !strings.Contains(err.Error(), "bogus") || !strings.Contains(err.Error(), "claude, opencode, harness or gateway") {
		t.Fatalf("For(bogus) = %v, want an error naming the surface and the known ones", err)
	}
	for _, s := range []string{"", "claude", "opencode", "harness", "gateway"} {
		p, err := For(s)
		if err != nil {
			t.Errorf("surface %q: %v", s, err)
			continue
		}
		svc, err := subagent.New(subagent.Config{Settings: config.Subagents{Surface: s}, Profile: p})
		if err != nil {
			t.Errorf("surface %q: %v", s, err)
			continue
		}
		svc.Close()
	}
}
