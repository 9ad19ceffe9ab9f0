package tablerow

import (
	"slices"
	"testing"
)

// TestChanged: values compare by what they hold, the pointers of a
// column that may be NULL included.
func TestChanged(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	str := func(v string) *string { return &v }
	for _, tt := range []struct {
		name          string
		before, after []any
		want          []int
	}{
		{"nothing", []any{"a", int64(1), true}, []any{"a", int64(1), true}, nil},
		{"scalars", []any{"a", int64(1), true}, []any{"b", int64(1), false}, []int{0, 2}},
		{"a time, the same in two pointers", []any{ms(5)}, []any{ms(5)}, nil},
		{"a time set", []any{(*int64)(nil)}, []any{ms(5)}, []int{0}},
		{"a time cleared", []any{ms(5)}, []any{(*int64)(nil)}, []int{0}},
		{"a time moved", []any{ms(5)}, []any{ms(6)}, []int{0}},
		{"a text, the same in two pointers", []any{str("x")}, []any{str("x")}, nil},
		{"a text set", []any{(*string)(nil)}, []any{str("x")}, []int{0}},
		{"a text changed", []any{str("x")}, []any{str("y")}, []int{0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Changed(tt.before, tt.after); !slices.Equal(got, tt.want) {
				t.Errorf("Changed = %v, want %v", got, tt.want)
			}
		})
	}
}
