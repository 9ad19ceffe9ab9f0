//lint:file-ignore SA1019 these tests name the SDKs' deprecated model constants on purpose: the catalogue must know every model the SDKs list, retiring ones included.

package catalog

import (
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3/shared"
)

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t.Add(12 * time.Hour)
}

// The aliases point at the newest model of each family that the pinned
// Anthropic SDK lists: naming the SDK's constants here makes a move of the
// SDK that drops one a compile error, and a newer generation a diff to
// review.
func TestAliasesResolveToTheSDKsNewest(t *testing.T) {
	want := map[string]string{
		"sonnet": "anthropic:" + sdk.ModelClaudeSonnet5_5,
		"opus":   "anthropic:" + sdk.ModelClaudeOpus5_5,
		"haiku":  "anthropic:" + sdk.ModelClaudeHaiku5_5,
		"fable":  "anthropic:" + sdk.ModelClaudeFable5_2,
	}
	tab := Default()
	if len(tab.Aliases) != len(want) {
		t.Errorf("aliases = %v, want exactly %v", tab.Aliases, want)
	}
	for alias, target := range want {
		got, ok := tab.Alias(alias)
		if !ok || got != target {
			t.Errorf("alias %s = %q, want %q", alias, got, target)
			continue
		}
		m, ok := tab.Lookup(strings.TrimPrefix(got, "anthropic:"))
		if !ok {
			t.Errorf("alias %s: %s is not in the table", alias, got)
			continue
		}
		if m.State(time.Now()) != Active || m.Price == nil || m.Context == 0 || m.MaxOutput == 0 {
			t.Errorf("alias %s → %+v: want an active model with a price, a window and an output limit", alias, m)
		}
	}
}

// Every model the SDKs still list by name is known, and the ones they
// mark deprecated carry the same shutdown date.
func TestSDKModelsAreKnown(t *testing.T) {
	tab := Default()
	for _, id := range []string{
		sdk.ModelClaudeFable5_2, sdk.ModelClaudeMythos5_2, sdk.ModelClaudeHaiku5_5, sdk.ModelClaudeSonnet5_5,
		sdk.ModelClaudeFable5_1, sdk.ModelClaudeOpus5_5, sdk.ModelClaudeMythos5_1, sdk.ModelClaudeSonnet5,
		sdk.ModelClaudeFable5, sdk.ModelClaudeMythos5, sdk.ModelClaudeOpus5, sdk.ModelClaudeOpus4_8,
		sdk.ModelClaudeOpus4_7, sdk.ModelClaudeOpus4_6, sdk.ModelClaudeSonnet4_6, sdk.ModelClaudeHaiku4_5,
		sdk.ModelClaudeHaiku4_5_20251001, sdk.ModelClaudeOpus4_5, sdk.ModelClaudeOpus4_5_20251101,
		sdk.ModelClaudeSonnet4_5, sdk.ModelClaudeSonnet4_5_20250929, sdk.ModelClaudeMythosPreview,
		shared.ChatModelGPT6_1Sol, shared.ChatModelGPT6Sol, shared.ChatModelGPT6Luna, shared.ChatModelGPT5_6Sol,
		shared.ChatModelGPT5, shared.ChatModelGPT5Mini, shared.ChatModelGPT4o, shared.ChatModelGPT4oMini,
	} {
		if _, ok := tab.Lookup(id); !ok {
			t.Errorf("%s is not in the table", id)
		}
	}
	for id, retires := range map[string]string{
		sdk.ModelClaudeSonnet4_5: "2026-11-30", sdk.ModelClaudeOpus4_5: "2027-01-22", sdk.ModelClaudeMythosPreview: "2026-06-30",
		shared.ChatModelGPT5: "2026-12-11", shared.ChatModelGPT4o: "2027-01-14",
	} {
		if m, _ := tab.Lookup(id); m.Retires != retires {
			t.Errorf("%s retires %q, want %q as the SDK says", id, m.Retires, retires)
		}
	}
}

func TestLookup(t *testing.T) {
	tab := Default()
	tests := []struct {
		id, want string // want "" = unknown
	}{
		{"claude-sonnet-5-5", "claude-sonnet-5-5"},
		{"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-sonnet-4-20250514", "claude-sonnet-4"},
		{"claude-sonnet-4-0", "claude-sonnet-4"},
		{"anthropic/claude-opus-5-5", "claude-opus-5-5"},
		{"gpt-5-2025-08-07", "gpt-5"},
		{"gpt-4o-mini", "gpt-4o-mini"},
		// Never by a looser prefix: a model the table does not list is
		// unknown, not priced or retired as its elder.
		{"claude-sonnet-4-9", ""},
		{"claude-sonnet-5-5-fast", ""},
		{"gpt-4o-mini-search-preview", ""},
		{"gpt-5-20251", ""},
		{"", ""},
	}
	for _, tt := range tests {
		m, ok := tab.Lookup(tt.id)
		if got := m.ID; ok != (tt.want != "") || got != tt.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tt.id, got, ok, tt.want)
		}
	}
}

func TestLifecycle(t *testing.T) {
	tab := Default()
	sonnet45, _ := tab.Lookup("claude-sonnet-4-5")
	opus41, _ := tab.Lookup("claude-opus-4-1")
	current, _ := tab.Lookup("claude-sonnet-5-5")
	tests := []struct {
		m         Model
		on        string
		state     State
		noticeHas []string
		noNotice  bool
	}{
		{sonnet45, "2026-11-28", Deprecated, []string{"claude-sonnet-4-5 is deprecated", "retires on 2026-11-30", "use claude-sonnet-5-5 instead (--model sonnet)"}, false},
		{sonnet45, "2026-11-29", Deprecated, []string{"retires on 2026-11-30"}, false},
		{sonnet45, "2026-11-30", RetiredState, []string{"was retired on 2026-11-30", "no longer answers", "use claude-sonnet-5-5"}, false},
		{opus41, "2026-11-28", RetiredState, []string{"claude-opus-4-1 is retired", "use claude-opus-5-5 instead (--model opus)"}, false},
		{current, "2030-01-01", Active, nil, true},
	}
	for _, tt := range tests {
		now := day(tt.on)
		if got := tt.m.State(now); got != tt.state {
			t.Errorf("%s on %s: state %v, want %v", tt.m.ID, tt.on, got, tt.state)
		}
		n := tt.m.Notice(now)
		if tt.noNotice != (n == "") {
			t.Errorf("%s on %s: notice %q", tt.m.ID, tt.on, n)
		}
		for _, s := range tt.noticeHas {
			if !strings.Contains(n, s) {
				t.Errorf("%s on %s: notice %q lacks %q", tt.m.ID, tt.on, n, s)
			}
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct{ name, json, want string }{
		{"unknown field", `{"models":[{"provider":"a","id":"m","prise":{}}]}`, "unknown field"},
		{"duplicate", `{"models":[{"provider":"a","id":"m"},{"provider":"a","id":"m"}]}`, "appears twice"},
		{"bad date", `{"models":[{"provider":"a","id":"m","retires":"30/11/2026","replacement":"n"},{"provider":"a","id":"n"}]}`, "YYYY-MM-DD"},
		{"no replacement", `{"models":[{"provider":"a","id":"m","retired":true}]}`, "needs a replacement"},
		{"unknown replacement", `{"models":[{"provider":"a","id":"m","retired":true,"replacement":"x"}]}`, "not in the table"},
		{"retired replacement", `{"models":[{"provider":"a","id":"m","retired":true,"replacement":"n"},{"provider":"a","id":"n","retired":true,"replacement":"m"}]}`, "itself deprecated"},
		{"dangling alias", `{"aliases":{"s":"a:x"},"models":[{"provider":"a","id":"m"}]}`, "alias s"},
		{"alias of another provider", `{"aliases":{"s":"b:m"},"models":[{"provider":"a","id":"m"}]}`, "alias s"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.json))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want one mentioning %q", tt.name, err, tt.want)
		}
	}
}

// BenchmarkParse is what the first model resolution of a process pays for
// the table (it is parsed once, on first use).
func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		if _, err := Parse(modelsJSON); err != nil {
			b.Fatal(err)
		}
	}
}
