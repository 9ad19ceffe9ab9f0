package provider

import (
	"sort"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// Price is USD per million tokens.
type Price struct {
	Input, Output, CacheRead, CacheWrite float64
}

// builtinPrices are list prices of well-known models, keyed by the
// provider's model id; a dated id ("claude-sonnet-4-5-20250929") matches its
// undated key by prefix. Settings override or extend them.
var builtinPrices = map[string]Price{
	"claude-opus-4-5":   {Input: 5, Output: 25, CacheRead: 0.5, CacheWrite: 6.25},
	"claude-opus-4-1":   {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-opus-4":     {Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75},
	"claude-sonnet-4-5": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-sonnet-4":   {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CacheRead: 0.1, CacheWrite: 1.25},
	"claude-3-5-haiku":  {Input: 0.8, Output: 4, CacheRead: 0.08, CacheWrite: 1},
	"gpt-5":             {Input: 1.25, Output: 10, CacheRead: 0.125},
	"gpt-5-mini":        {Input: 0.25, Output: 2, CacheRead: 0.025},
	"gpt-5-nano":        {Input: 0.05, Output: 0.4, CacheRead: 0.005},
	"gpt-4.1":           {Input: 2, Output: 8, CacheRead: 0.5},
	"gpt-4.1-mini":      {Input: 0.4, Output: 1.6, CacheRead: 0.1},
	"gpt-4.1-nano":      {Input: 0.1, Output: 0.4, CacheRead: 0.025},
	"gpt-4o":            {Input: 2.5, Output: 10, CacheRead: 1.25},
	"gpt-4o-mini":       {Input: 0.15, Output: 0.6, CacheRead: 0.075},
	"o3":                {Input: 2, Output: 8, CacheRead: 0.5},
	"o3-mini":           {Input: 1.1, Output: 4.4, CacheRead: 0.55},
	"o4-mini":           {Input: 1.1, Output: 4.4, CacheRead: 0.275},
}

// Pricing looks up prices: overrides first (by "provider:model" or model
// id), then the built-in table. A model with no known price has an unknown
// cost, never 0.
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
	return longestPrefix(builtinPrices, ref.Model)
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
