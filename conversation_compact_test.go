package cadre_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// /compact compacts now, through the loop's compaction: the summary call,
// a manual compact_boundary, and the next turn starting from the summary.
func TestConversationCompactSummarisesNow(t *testing.T) {
	for _, tc := range []struct {
		name, settings string
		sends          int
		want           string
		summarised     bool
	}{
		{"compacts", `{"compaction":{"keepRecent":2}}`, 3, "a summary replaced 3 older messages", true},
		{"nothing older", `{"compaction":{"keepRecent":6}}`, 1, "not enough messages to compact yet", false},
		{"turned off", `{"compaction":{"disabled":true}}`, 1, "turned off", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			var mu sync.Mutex
			var afterSummary []string
			f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
				if req.Agent == "main:compact" {
					return llm.Reply(llm.Text("SUMMARY-TEXT")), nil
				}
				mu.Lock()
				afterSummary = append(afterSummary, req.Messages[0].Text())
				mu.Unlock()
				return llm.Reply(llm.Text("ok")), nil
			}
			var triggers []string
			rt := f.open(t, cadre.Options{Settings: tc.settings, Hooks: map[cadre.HookEvent][]cadre.HookMatcher{
				cadre.HookPreCompact: {{Matcher: "manual", Hooks: []cadre.HookFunc{func(_ context.Context, in cadre.HookInput) (cadre.HookOutput, error) {
					mu.Lock()
					defer mu.Unlock()
					triggers = append(triggers, in.Trigger)
					return cadre.HookOutput{}, nil
				}}}},
			}})
			cv := openConvo(t, rt, cadre.OpenRequest{})
			for i := range tc.sends {
				cv.send("message " + string(rune('A'+i)))
			}
			cv.waitResults(tc.sends)
			if err := cv.c.Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
			rs := cv.waitResults(tc.sends + 1)
			if got := rs[tc.sends]; !strings.Contains(got.Result+strings.Join(got.Errors, " "), tc.want) {
				t.Fatalf("compact result %+v, want %q", got, tc.want)
			}
			cv.send("after")
			cv.waitResults(tc.sends + 2)
			mu.Lock()
			first := afterSummary[len(afterSummary)-1]
			// A PreCompact hook matching "manual" ran before the summary.
			if hooked := len(triggers) == 1 && triggers[0] == "manual"; hooked != tc.summarised {
				t.Errorf("PreCompact hooks saw %q, want one manual trigger: %v", triggers, tc.summarised)
			}
			mu.Unlock()
			if got := strings.Contains(first, "SUMMARY-TEXT"); got != tc.summarised {
				t.Errorf("the next turn's first message %q: summary %v, want %v", first, got, tc.summarised)
			}
			cv.mu.Lock()
			defer cv.mu.Unlock()
			boundary := false
			for _, ev := range cv.evs {
				if ev.Subtype == cadre.SubtypeCompactBoundary && ev.Compact != nil && ev.Compact.Trigger == "manual" {
					boundary = true
				}
			}
			if boundary != tc.summarised {
				t.Errorf("manual compact_boundary event: %v, want %v", boundary, tc.summarised)
			}
		})
	}
}
