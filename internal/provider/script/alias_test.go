package script

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAliasesCannotExplode: a tool input is converted by following
// aliases, so an alias to a value containing it recursed until the stack
// overflowed (a crash no recover catches), and nested aliases made a few
// lines into a billion values. Such a scenario is refused with the
// alias's line.
func TestAliasesCannotExplode(t *testing.T) {
	laughs := "agents:\n  main:\n    - tool_use:\n      - name: Read\n        input:\n" +
		"          l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	for i := 1; i <= 9; i++ {
		prev := fmt.Sprintf("*l%d", i-1)
		laughs += fmt.Sprintf("          l%d: &l%d [%s%s]\n", i, i, strings.Repeat(prev+", ", 9), prev)
	}
	tests := []struct{ name, src, want string }{
		{"input contains itself", "agents:\n  main:\n    - tool_use: [{name: Read, input: &in {path: *in}}]\n",
			"fuzz.yaml:3: not valid YAML: an alias refers to a value that contains it"},
		// The first alias of l3 is where the count passes the bound.
		{"billion laughs", laughs, "fuzz.yaml:9: not valid YAML: aliases expand to more than 10000 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, err := Parse("fuzz.yaml", []byte(tt.src))
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v", d)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
