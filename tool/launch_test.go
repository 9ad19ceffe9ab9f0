package tool

import (
	"context"
	"slices"
	"testing"
)

// What a batch launches starts once its last launching call settled, in
// the order it was launched; a launch after that, or outside any batch,
// starts at once; opening again starts nothing twice.
func TestLaunches(t *testing.T) {
	var order []string
	start := func(name string) func() { return func() { order = append(order, name) } }

	AfterLaunches(context.Background(), start("outside"))
	l := NewLaunches(2)
	ctx := WithLaunches(context.Background(), l)
	AfterLaunches(ctx, start("a"))
	AfterLaunches(ctx, start("b"))
	l.Settle()
	if len(order) != 1 {
		t.Fatalf("started %v after one of two calls settled, want only [outside]", order)
	}
	l.Settle()
	AfterLaunches(ctx, start("later"))
	l.Open()
	if want := []string{"outside", "a", "b", "later"}; !slices.Equal(order, want) {
		t.Errorf("started %v, want %v", order, want)
	}
	none := NewLaunches(0)
	AfterLaunches(WithLaunches(context.Background(), none), start("no launchers"))
	if order[len(order)-1] != "no launchers" {
		t.Errorf("a gate for no calls held a launch: %v", order)
	}
}
