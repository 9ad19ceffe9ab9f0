package llm

import (
	"fmt"
	"strconv"
	"strings"
)

// Thinking budgets of the named effort levels. They follow Claude Code's
// thinking keywords ("think" 4,000, "megathink" 10,000, "ultrathink"
// 31,999) so that an agent file written for Claude Code thinks as much in
// cadre; the OpenAI adapter maps the same budgets back onto low, medium and
// high reasoning effort.
const (
	EffortLowBudget    = 4000
	EffortMediumBudget = 10000
	EffortHighBudget   = 31999
)

// minThinkingBudget is the smallest budget Anthropic's API accepts.
const minThinkingBudget = 1024

// ParseEffort reads an effort or thinking setting, as an agent file's
// effort or thinking field, a flag or a setting gives it: a level (low,
// medium, high; max, xhigh and ultrathink are high; minimal is low), a
// token budget ("8000"), or a switch (on, true, enabled: medium; off,
// false, none, disabled: nil). "" is nil: the model's default.
//
// It is shared by every front end (flags, settings, agent files), so that
// the same word means the same budget everywhere.
func ParseEffort(s string) (*Thinking, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "", "off", "false", "none", "disabled", "no":
		return nil, nil
	case "minimal", "low":
		return &Thinking{BudgetTokens: EffortLowBudget}, nil
	case "medium", "on", "true", "enabled", "yes":
		return &Thinking{BudgetTokens: EffortMediumBudget}, nil
	case "high", "max", "xhigh", "ultrathink":
		return &Thinking{BudgetTokens: EffortHighBudget}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("effort %q is not valid: want low, medium, high, max, a thinking budget in tokens, or off", s)
	}
	switch {
	case n == 0:
		return nil, nil
	case n < minThinkingBudget:
		return nil, fmt.Errorf("thinking budget %d is too small: a budget is at least %d tokens (or 0 for none)", n, minThinkingBudget)
	case n > 128000:
		return nil, fmt.Errorf("thinking budget %d is too large: at most 128000 tokens", n)
	}
	return &Thinking{BudgetTokens: n}, nil
}
