package fuzzcheck

import (
	"strings"
	"testing"
)

func TestEcho(t *testing.T) {
	input := "head " + strings.Repeat("v", MaxEcho+1) + " tail"
	tests := []struct {
		name, text string
		echoed     bool
	}{
		{"short excerpt", "bad value \"" + strings.Repeat("v", 64) + "…\"", false},
		{"exactly the bound", "bad value:" + strings.Repeat("v", MaxEcho) + ".", false},
		{"whole value", "bad value \"" + strings.Repeat("v", MaxEcho+1) + "\"", true},
		{"the whole input", input, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Echo(input, tt.text) != ""; got != tt.echoed {
				t.Errorf("Echo = %v, want %v", got, tt.echoed)
			}
		})
	}
}

func TestLines(t *testing.T) {
	for in, want := range map[string]int{
		"":               1,
		"a":              1,
		"a\n":            2,
		"a\r\nb":         2,
		"a\rb\nc":        3,
		"a\u2028b\u0085": 3,
	} {
		if got := Lines([]byte(in)); got != want {
			t.Errorf("Lines(%q) = %d, want %d", in, got, want)
		}
	}
}
