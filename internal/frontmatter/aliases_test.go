package frontmatter

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestCheckAliases(t *testing.T) {
	laughs := "l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n"
	for i := 1; i <= 9; i++ {
		prev := fmt.Sprintf("*l%d", i-1)
		laughs += fmt.Sprintf("l%d: &l%d [%s%s]\n", i, i, strings.Repeat(prev+", ", 9), prev)
	}
	tests := []struct {
		name, src string
		line      int // 0: no error
		msg       string
	}{
		{"no aliases", "a: [1, 2]\nb: {c: d}\n", 0, ""},
		{"an alias used twice", "tools: &t [Read, Grep]\ndisallowedTools: *t\nmore: *t\n", 0, ""},
		{"a sequence holding itself", "a: &x [1, *x]\n", 1, "an alias refers to a value that contains it"},
		{"a mapping holding itself deeper", "a: &x\n  b:\n    c: *x\n", 3, "an alias refers to a value that contains it"},
		{"the document holding itself", "&x {b: *x}\n", 1, "an alias refers to a value that contains it"},
		// The first alias of l3 is where the count passes the bound.
		{"billion laughs", laughs, 4, "aliases expand to more than 10000 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tt.src), &doc); err != nil {
				t.Fatal(err)
			}
			err := CheckAliases(&doc)
			var ae *AliasError
			switch {
			case tt.line == 0 && err != nil:
				t.Errorf("CheckAliases = %v, want nil", err)
			case tt.line != 0 && (!errors.As(err, &ae) || ae.Line != tt.line || ae.Msg != tt.msg):
				t.Errorf("CheckAliases = %v, want line %d: %s", err, tt.line, tt.msg)
			}
		})
	}
}
