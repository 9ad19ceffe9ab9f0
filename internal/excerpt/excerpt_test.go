package excerpt

import (
	"strings"
	"testing"
)

func TestClipAndQuote(t *testing.T) {
	long := strings.Repeat("a", Max) + "bcd"
	tests := []struct {
		name, in, clip, quote string
	}{
		{"short", "abc", "abc", `"abc"`},
		{"exactly Max", long[:Max], long[:Max], `"` + long[:Max] + `"`},
		{"long", long, long[:Max] + "…", `"` + long[:Max] + `…" (67 bytes)`},
		// A rune that straddles the cut is left out whole.
		{"rune at the cut", strings.Repeat("a", Max-1) + "é" + "z", strings.Repeat("a", Max-1) + "…", `"` + strings.Repeat("a", Max-1) + `…" (66 bytes)`},
		{"quoting escapes", "a\"\n", "a\"\n", `"a\"\n"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clip(tt.in); got != tt.clip {
				t.Errorf("Clip = %q, want %q", got, tt.clip)
			}
			if got := Quote(tt.in); got != tt.quote {
				t.Errorf("Quote = %s, want %s", got, tt.quote)
			}
		})
	}
	if got := Message(strings.Repeat("x", 3*Max)); len(got) != 2*Max+len("…") {
		t.Errorf("Message kept %d bytes, want %d and an ellipsis", len(got), 2*Max)
	}
}
