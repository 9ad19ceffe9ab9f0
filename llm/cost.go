package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Cost is an amount in US dollars that may be unknown: what a model
// nobody priced costs. It is never a silent 0: an unknown cost marshals to
// JSON null and prints as "?". A sum with any unknown part is unknown.
//
// The zero Cost is a known $0, what nothing spent costs.
type Cost struct {
	// usd is the sum of the parts that have a price.
	usd float64
	// unknown says that some part had none.
	unknown bool
}

// USD is a known cost of v dollars.
func USD(v float64) Cost { return Cost{usd: v} }

// UnknownCost is the cost of usage on a model with no known price.
func UnknownCost() Cost { return Cost{unknown: true} }

// USD returns the cost in dollars and whether it is known. When it is
// not, v is what the priced parts add up to: a lower bound.
func (c Cost) USD() (v float64, known bool) { return c.usd, !c.unknown }

// Known reports whether every part of c had a price.
func (c Cost) Known() bool { return !c.unknown }

// Add returns c plus d, unknown if either is.
func (c Cost) Add(d Cost) Cost {
	return Cost{usd: c.usd + d.usd, unknown: c.unknown || d.unknown}
}

// Equal reports whether c and d are the same cost (go-cmp uses it).
func (c Cost) Equal(d Cost) bool { return c == d }

// String is "$0.0123", or "?" when the cost is unknown.
func (c Cost) String() string {
	if c.unknown {
		return "?"
	}
	return fmt.Sprintf("$%.4f", c.usd)
}

// MarshalJSON writes the dollars as a number, or null when unknown.
func (c Cost) MarshalJSON() ([]byte, error) {
	if c.unknown {
		return []byte("null"), nil
	}
	return json.Marshal(c.usd)
}

// UnmarshalJSON reads a number, or null as an unknown cost.
func (c *Cost) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), []byte("null")) {
		*c = UnknownCost()
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("cost: want a number of dollars or null: %w", err)
	}
	*c = USD(v)
	return nil
}
