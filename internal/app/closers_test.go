package app

import (
	"errors"
	"slices"
	"testing"
)

func TestClosersUnwindLastFirstOnce(t *testing.T) {
	var order []string
	errB := errors.New("b failed")
	var c closers
	c.push(func() error { order = append(order, "a"); return nil })
	c.push(func() error { order = append(order, "b"); return errB })
	c.push(func() error { order = append(order, "c"); return nil })
	err := c.unwind()
	if want := []string{"c", "b", "a"}; !slices.Equal(order, want) {
		t.Errorf("unwound %v, want %v", order, want)
	}
	if !errors.Is(err, errB) {
		t.Errorf("unwind error = %v, want it to wrap %v", err, errB)
	}
	if err := c.unwind(); err != nil || len(order) != 3 {
		t.Errorf("second unwind ran again (order %v, err %v)", order, err)
	}
}
