package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// laughs returns the lines of a YAML mapping, each indented by indent,
// that aliases expand to 10^9 strings ("billion laughs").
func laughs(indent string) string {
	var b strings.Builder
	b.WriteString(indent + "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		prev := fmt.Sprintf("*l%d", i-1)
		fmt.Fprintf(&b, "%sl%d: &l%d [%s%s]\n", indent, i, i, strings.Repeat(prev+", ", 9), prev)
	}
	return b.String()
}

// TestAliasesCannotExplode: the fields kept as values (hooks, mcpServers)
// are converted by following aliases, so an alias to a value containing
// it recursed until the stack overflowed (a crash no recover catches),
// and nested aliases made a few lines into billions of values. Such a
// file is now one more invalid file, reported with the alias's line.
func TestAliasesCannotExplode(t *testing.T) {
	tests := []struct{ name, frontmatter, want string }{
		{"hooks contain themselves", "hooks: &h {PostToolUse: *h}\n", "3: frontmatter is not valid YAML: line 3: an alias refers to a value that contains it"},
		{"server config contains itself", "mcpServers:\n  - &s {github: [*s]}\n", "4: frontmatter is not valid YAML: line 4: an alias refers to a value that contains it"},
		// The first alias of l3 is where the count passes the bound.
		{"billion laughs in hooks", "hooks:\n" + laughs("  "), "7: frontmatter is not valid YAML: line 7: aliases expand to more than 10000 values"},
		{"billion laughs in mcpServers", "mcpServers:\n  - x: 1\n" + laughs("    "), "8: frontmatter is not valid YAML: line 8: aliases expand to more than 10000 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := "---\ndescription: d\n" + tt.frontmatter + "---\n"
			start := time.Now()
			_, problems := parseAgentInput(FormatOpenCode, []byte(content))
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
			if len(problems) != 1 || !strings.Contains(problems[0].Error(), tt.want) {
				t.Errorf("problems = %v, want one containing %q", problems, tt.want)
			}
		})
	}
}
