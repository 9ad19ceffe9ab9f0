// Package inventory keeps track of items in a small shop's stock.
package inventory

import "errors"

// ErrOutOfStock is returned when an item cannot be taken.
var ErrOutOfStock = errors.New("out of stock")

// Stock maps item names to counts.
type Stock map[string]int

// Take removes n items of name from the stock.
func (s Stock) Take(name string, n int) error {
	// TODO: reject negative n; today Take(-3) silently adds three items.
	if s[name] < n {
		return ErrOutOfStock
	}
	s[name] -= n
	return nil
}

// Restock adds n items of name.
func (s Stock) Restock(name string, n int) {
	s[name] += n
}
