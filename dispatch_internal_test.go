package cadre

import (
	"testing"

	"github.com/cadre-dev/cadre/internal/config"
)

// The SDK's Dispatch values are written out for go doc; they must stay the
// settings' values, which dispatchMode compares them with.
func TestDispatchValuesAreTheSettings(t *testing.T) {
	if DispatchSticky != config.DispatchSticky || DispatchAny != config.DispatchAny {
		t.Errorf("DispatchSticky %q, DispatchAny %q; the settings say %q and %q", DispatchSticky, DispatchAny, config.DispatchSticky, config.DispatchAny)
	}
}
