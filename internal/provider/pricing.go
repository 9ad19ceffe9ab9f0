package provider

import (
	"sort"
	"strings"

	"github.com/cadre-dev/cadre/internal/catalog"
	"github.com/cadre-dev/cadre/llm"
)

// Price is USD per million tokens.
type Price = catalog.Price

// Pricing looks up prices: overrides first (by "provider:model" or model
// id, or a model id's prefix), then the model catalogue
// (internal/catalog). A model with no known price has an unknown cost,
// never 0.
type Pricing struct {
	Overrides map[string]Price
}

// Lookup returns the price of ref and whether one is known.
func (p Pricing) Lookup(ref Ref) (Price, bool) {
	for _, key := range []string{ref.String(), ref.Model} {
		if pr, ok := p.Overrides[key]; ok {
			return pr, true
		}
	}
	if pr, ok := longestPrefix(p.Overrides, ref.Model); ok {
		return pr, true
	}
	if m, ok := catalog.Default().Lookup(ref.Model); ok && m.Price != nil {
		return *m.Price, true
	}
	return Price{}, false
}

// Cost is the estimated USD cost of u on ref; unknown when the price is,
// unless u is empty: no tokens cost $0 on any model.
func (p Pricing) Cost(ref Ref, u llm.Usage) llm.Cost {
	pr, ok := p.Lookup(ref)
	if !ok {
		if u == (llm.Usage{}) {
			return llm.Cost{}
		}
		return llm.UnknownCost()
	}
	return llm.USD((float64(u.InputTokens)*pr.Input +
		float64(u.OutputTokens)*pr.Output +
		float64(u.CacheReadInputTokens)*pr.CacheRead +
		float64(u.CacheCreationInputTokens)*pr.CacheWrite) / 1e6)
}

func longestPrefix(table map[string]Price, model string) (Price, bool) {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	// Longest first, so "gpt-4o-mini" wins over "gpt-4o".
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		if model == k || strings.HasPrefix(model, k+"-") {
			return table[k], true
		}
	}
	return Price{}, false
}
