package frontmatter

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestQuoteValuesKeepsEveryCharacter: a value quoted so that YAML reads
// it must read as the text it was. FuzzSplit found a lone CR in a value
// read back as a space (inside double quotes a line break folds); the
// other characters YAML treats as breaks, or refuses raw in a quoted
// scalar, are escaped the same way.
func TestQuoteValuesKeepsEveryCharacter(t *testing.T) {
	for _, tt := range []struct{ name, value string }{
		{"lone CR", "use: this\rnow"},
		{"control character", "use: this\x01now"},
		{"DEL", "use: this\x7fnow"},
		{"next line", "use: this\u0085now"},
		{"line separator", "use: this\u2028now"},
		{"paragraph separator", "use: this\u2029now"},
		{"byte-order mark", "use: this\ufeffnow"},
		{"quote and backslash", `use: "this" \ now`},
		{"tab", "use: this\tnow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fixed, lines := QuoteValues("description: "+tt.value, false)
			if len(lines) != 1 {
				t.Fatalf("QuoteValues left %q alone", tt.value)
			}
			var got map[string]string
			if err := yaml.Unmarshal([]byte(fixed), &got); err != nil {
				t.Fatalf("quoted as %q, which does not parse: %v", fixed, err)
			}
			if got["description"] != tt.value {
				t.Errorf("quoted as %q, which reads %q; want %q", fixed, got["description"], tt.value)
			}
		})
	}
}
