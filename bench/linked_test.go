//go:build unix

package bench

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoMethodLookupByName keeps reflect's method lookup by name out of
// the binary. Once reflect.Value.MethodByName (or Method with an index
// not known when linking) can be reached, the linker must keep every
// exported method of every type that might end up in an interface: with
// text/template's executor linked, that was 29 MB of a 108 MB binary,
// which every command maps and the runtime walks at start-up
// (docs/performance.md). cadre's templates run on internal/tmplexec.
func TestNoMethodLookupByName(t *testing.T) {
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm %s: %v", bin, err)
	}
	for _, sym := range []string{"reflect.Value.MethodByName", "reflect.Value.Method", "text/template.(*state).evalField"} {
		for line := range strings.Lines(string(out)) {
			if f := strings.Fields(line); len(f) == 3 && f[2] == sym {
				t.Errorf("%s is linked: find its caller with go build -ldflags=-dumpdep (look for <ReflectMethod>) and avoid it", sym)
			}
		}
	}
}
