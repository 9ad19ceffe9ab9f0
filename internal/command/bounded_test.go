package command

import (
	"strings"
	"testing"
	"time"
)

// TestLongInvalidFrontmatterIsQuick: finding the line of a YAML error
// parsed every prefix of the frontmatter, so a 24 KB command file in a
// cloned repository held up start-up for a minute and a half (and a 1 MiB
// one for good). The search now has a budget; past it the line is yaml's
// own, and the file is still reported.
func TestLongInvalidFrontmatterIsQuick(t *testing.T) {
	const n = 4000
	file := "---\ndescription: d\nallowed-tools: {\n" + strings.Repeat("b: c,\n", n) + "---\nbody\n"
	start := time.Now()
	_, problems := parseFile("x.md", []byte(file), KindCommand, "x", SourceProject)
	// Linear work takes well under a second (a few with -race on a busy
	// machine); the quadratic search took 46 s without -race.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("parsing a %d-byte file took %v", len(file), d)
	}
	if len(problems) != 1 || !strings.Contains(problems[0].Message, "frontmatter is not valid YAML") {
		t.Fatalf("problems = %v, want the YAML error", problems)
	}
	if l := problems[0].Line; l < 1 || l > n+5 {
		t.Errorf("line %d is not in the file", l)
	}
}
