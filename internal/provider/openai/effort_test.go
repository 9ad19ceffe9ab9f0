package openai

import (
	"testing"

	"github.com/cadre-dev/cadre/llm"
)

func TestThinkingBecomesReasoningEffort(t *testing.T) {
	for _, tc := range []struct {
		model  string
		budget int64
		custom bool
		want   string
	}{
		{"o3", 2000, false, "low"},
		{"o4-mini", 8000, false, "medium"},
		{"gpt-5", 30000, false, "high"},
		{"gpt-4o", 8000, false, ""},
		{"o3", 8000, true, ""},
		{"o3", 0, false, ""},
	} {
		var th *llm.Thinking
		if tc.budget > 0 {
			th = &llm.Thinking{BudgetTokens: tc.budget}
		}
		if got := string(effort(th, tc.model, tc.custom)); got != tc.want {
			t.Errorf("effort(%d, %s, custom %v) = %q, want %q", tc.budget, tc.model, tc.custom, got, tc.want)
		}
	}
}

// The levels an agent file or a flag names come back as the same levels.
func TestEffortLevelsRoundTrip(t *testing.T) {
	for _, level := range []string{"low", "medium", "high"} {
		th, err := llm.ParseEffort(level)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(effort(th, "o4-mini", false)); got != level {
			t.Errorf("effort %s became reasoning_effort %q", level, got)
		}
	}
}
