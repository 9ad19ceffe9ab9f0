package llm_test

import (
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/llm"
)

func TestCostUnknownIsNeverZero(t *testing.T) {
	for _, tc := range []struct {
		name      string
		cost      llm.Cost
		json, str string
		usd       float64
		known     bool
	}{
		{"zero", llm.Cost{}, "0", "$0.0000", 0, true},
		{"known", llm.USD(0.25), "0.25", "$0.2500", 0.25, true},
		{"unknown", llm.UnknownCost(), "null", "?", 0, false},
		{"known plus unknown", llm.USD(1).Add(llm.UnknownCost()), "null", "?", 1, false},
		{"unknown plus known", llm.UnknownCost().Add(llm.USD(2)), "null", "?", 2, false},
		{"known sum", llm.USD(1).Add(llm.USD(0.5)), "1.5", "$1.5000", 1.5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.cost)
			if err != nil || string(b) != tc.json {
				t.Errorf("JSON %s, %v; want %s", b, err, tc.json)
			}
			if s := tc.cost.String(); s != tc.str {
				t.Errorf("String %q, want %q", s, tc.str)
			}
			if v, known := tc.cost.USD(); v != tc.usd || known != tc.known {
				t.Errorf("USD %v, %v; want %v, %v", v, known, tc.usd, tc.known)
			}
			var back llm.Cost
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Known() != tc.known {
				t.Errorf("read back as known=%v, want %v", back.Known(), tc.known)
			}
		})
	}
}

func TestCostUnmarshalRejectsText(t *testing.T) {
	var c llm.Cost
	if err := json.Unmarshal([]byte(`"free"`), &c); err == nil {
		t.Errorf("a string read as cost %v", c)
	}
}
