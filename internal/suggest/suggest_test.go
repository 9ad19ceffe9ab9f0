package suggest

import "testing"

func TestClosest(t *testing.T) {
	fields := []string{"description", "model", "allowed-tools", "maxTurns", "url"}
	tests := []struct {
		name       string
		word       string
		candidates []string
		want       string
		wantOK     bool
	}{
		{"exact", "model", fields, "model", true},
		{"case differs", "MAXTURNS", fields, "maxTurns", true},
		{"one edit", "modle", fields, "model", true},
		{"two edits", "descriptn", fields, "description", true},
		{"three edits is too far", "descri", fields, "", false},
		{"case-insensitive distance", "MaxTurn", fields, "maxTurns", true},
		{"nothing near", "colour", fields, "", false},
		{"no candidates", "model", nil, "", false},
		{"nearest wins", "tex", []string{"tool_use", "text", "next"}, "text", true},
		{"tie goes to the earliest", "moda", []string{"mode", "modb"}, "mode", true},
		{"exact ignoring case beats an earlier near one", "Mode", []string{"model", "mode"}, "mode", true},
		{"short candidate not offered for as many edits as letters", "x", []string{"id"}, "", false},
		{"short candidate offered for fewer edits", "i", []string{"id"}, "id", true},
		{"empty word", "", []string{"abc"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Closest(tt.word, tt.candidates)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Closest(%q, %q) = %q, %v; want %q, %v", tt.word, tt.candidates, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"same", "same", 0},
	}
	for _, tt := range tests {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
