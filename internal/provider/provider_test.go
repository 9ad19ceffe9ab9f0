package provider

import (
	"context"
	"errors"
	"iter"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/catalog"
	"github.com/cadre-dev/cadre/llm"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	cfg := Config{
		Aliases:   map[string]string{"fast": "openai:gpt-4o-mini", "quick": "fast", "sonnet": "anthropic:claude-sonnet-4-5-20250929"},
		Endpoints: map[string]Endpoint{"ollama": {Type: "openai", BaseURL: "http://127.0.0.1:11434/v1"}},
	}
	withDefault := cfg
	withDefault.DefaultProvider = "ollama"
	tests := []struct {
		name, in string
		cfg      Config
		want     string
		err      string
	}{
		{"qualified", "anthropic:claude-opus-5-5", cfg, "anthropic:claude-opus-5-5", ""},
		{"opencode slash", "openai/gpt-4o", cfg, "openai:gpt-4o", ""},
		{"custom provider", "ollama:llama3.2", cfg, "ollama:llama3.2", ""},
		{"custom provider slash", "ollama/llama3.2", cfg, "ollama:llama3.2", ""},
		{"model id with slash", "openai:meta-llama/Llama-3-8B", cfg, "openai:meta-llama/Llama-3-8B", ""},
		{"bare claude", "claude-haiku-4-5", cfg, "anthropic:claude-haiku-4-5", ""},
		{"bare gpt", "gpt-4.1", cfg, "openai:gpt-4.1", ""},
		{"bare o3", "o3", cfg, "openai:o3", ""},
		{"builtin alias", "opus", cfg, "anthropic:claude-opus-5-5", ""},
		{"builtin alias, current generation", "sonnet", Config{}, "anthropic:claude-sonnet-5-5", ""},
		{"fable", "fable", Config{}, "anthropic:claude-fable-5-2", ""},
		{"retired", "anthropic:claude-opus-4-1", cfg, "", "claude-opus-4-1 is retired and no longer answers; use claude-opus-5-5 instead (--model opus)"},
		{"retired, bare", "o3-mini", cfg, "", "o3-mini is retired"},
		{"retired, dated snapshot", "claude-opus-4-1-20250805", cfg, "", "use claude-opus-5-5"},
		{"retired name on a custom endpoint is the endpoint's business", "ollama:claude-opus-4-1", cfg, "ollama:claude-opus-4-1", ""},
		{"settings alias overrides builtin", "sonnet", cfg, "anthropic:claude-sonnet-4-5-20250929", ""},
		{"alias of alias", "quick", cfg, "openai:gpt-4o-mini", ""},
		{"script", "script:examples/demo/scenario.yaml", cfg, "script:examples/demo/scenario.yaml", ""},
		{"misspelt alias", "sonet", Config{}, "", `cannot tell the provider of model "sonet" (did you mean "sonnet"?)`},
		{"misspelt settings alias", "quik", cfg, "", `(did you mean "quick"?)`},
		{"misspelt provider", "antropic:claude-opus-5-5", cfg, "", `unknown provider "antropic" (did you mean "anthropic"?)`},
		{"nothing near", "zzzzzzzz", Config{}, "", "write it as provider:model"},
		{"default provider", "llama3.2", withDefault, "ollama:llama3.2", ""},
		{"unknown provider", "acme:x1", cfg, "", `unknown provider "acme" (known: anthropic, openai, script, ollama)`},
		{"bare unknown", "llama3.2", cfg, "", `cannot tell the provider of model "llama3.2"`},
		{"empty", "", cfg, "", "no model given"},
		{"no model after colon", "openai:", cfg, "", "names no model"},
		{"bad default", "x", Config{DefaultProvider: "nope"}, "", `defaultProvider "nope"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := Parse(tc.in, tc.cfg)
			if tc.err != "" {
				var le *llm.Error
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &le) || le.Kind != llm.ErrConfig {
					t.Fatalf("err = %v, want a config error containing %q", err, tc.err)
				}
				return
			}
			if err != nil || ref.String() != tc.want {
				t.Fatalf("Parse(%q) = %v, %v; want %s", tc.in, ref, err, tc.want)
			}
		})
	}
}

// A deprecated model resolves, and Lifecycle says so with the date and the
// replacement; from its retirement day on it is refused.
func TestLifecycle(t *testing.T) {
	on := func(d string) func() time.Time {
		return func() time.Time { t, _ := time.Parse(time.DateOnly, d); return t.Add(time.Hour) }
	}
	before, after := Config{Now: on("2026-11-28")}, Config{Now: on("2026-11-30")}
	ref, err := Parse("claude-sonnet-4-5", before)
	if err != nil {
		t.Fatalf("before retirement: %v", err)
	}
	st, notice := before.Lifecycle(ref)
	if st != catalog.Deprecated || !strings.Contains(notice, "retires on 2026-11-30") || !strings.Contains(notice, "use claude-sonnet-5-5 instead (--model sonnet)") {
		t.Errorf("before retirement: %v %q", st, notice)
	}
	if _, err := Parse("claude-sonnet-4-5-20250929", after); err == nil || !strings.Contains(err.Error(), "was retired on 2026-11-30") {
		t.Errorf("on retirement day: err = %v, want the refusal", err)
	}
	if st, notice := before.Lifecycle(Ref{"anthropic", "claude-sonnet-5-5"}); st != catalog.Active || notice != "" {
		t.Errorf("current model: %v %q", st, notice)
	}
}

func TestResolveMissingKeyNamesTheVariable(t *testing.T) {
	none := func(string) string { return "" }
	for _, tc := range []struct{ model, want string }{
		{"claude-sonnet-5-5", "ANTHROPIC_API_KEY"},
		{"openai:gpt-4o", "OPENAI_API_KEY"},
	} {
		_, err := Resolve(tc.model, Config{Getenv: none})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%s) err = %v, want it to name %s", tc.model, err, tc.want)
		}
	}
	_, err := Resolve("vllm:qwen", Config{Getenv: none, Endpoints: map[string]Endpoint{"vllm": {Type: "openai", BaseURL: "http://127.0.0.1:1/v1", APIKeyEnv: "VLLM_KEY"}}})
	if err == nil || !strings.Contains(err.Error(), "VLLM_KEY") {
		t.Errorf("err = %v, want it to name VLLM_KEY", err)
	}
	// A custom endpoint needs no key.
	if _, err := Resolve("local:qwen", Config{Getenv: none, Endpoints: map[string]Endpoint{"local": {Type: "openai", BaseURL: "http://127.0.0.1:1/v1"}}}); err != nil {
		t.Errorf("custom endpoint without key: %v", err)
	}
	if _, err := Resolve("x:y", Config{Getenv: none, Endpoints: map[string]Endpoint{"x": {Type: "gemini"}}}); err == nil || !strings.Contains(err.Error(), `type "gemini"`) {
		t.Errorf("err = %v", err)
	}
}

// flaky fails with errs in turn, then answers.
type flaky struct {
	errs  []error
	calls atomic.Int32
}

func (f *flaky) Name() string { return "test:flaky" }

func (f *flaky) Stream(ctx context.Context, _ *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		n := int(f.calls.Add(1)) - 1
		if !yield(llm.Event{Type: llm.EventTextDelta, Delta: "partial"}, nil) {
			return
		}
		if n < len(f.errs) {
			yield(llm.Event{}, f.errs[n])
			return
		}
		yield(llm.Event{Type: llm.EventDone, Response: llm.Reply(llm.Text("ok"))}, nil)
	}
}

func TestRetry(t *testing.T) {
	overloaded := &llm.Error{Kind: llm.ErrOverloaded}
	limited := &llm.Error{Kind: llm.ErrRateLimit, RetryAfter: 7 * time.Second}
	cut := &llm.Error{Kind: llm.ErrStreamCut}
	auth := &llm.Error{Kind: llm.ErrAuth}
	tests := []struct {
		name    string
		errs    []error
		calls   int
		waits   []time.Duration // exact waits expected; nil: only counted
		nwaits  int
		wantErr string
	}{
		{name: "success", calls: 1},
		{name: "overloaded then ok", errs: []error{overloaded}, calls: 2, nwaits: 1},
		{name: "retry-after honoured", errs: []error{limited, limited}, calls: 3, waits: []time.Duration{7 * time.Second, 7 * time.Second}},
		{name: "cut stream retried", errs: []error{cut}, calls: 2, nwaits: 1},
		{name: "not retryable", errs: []error{auth}, calls: 1, wantErr: "auth"},
		{name: "gives up", errs: []error{cut, cut, cut, cut, cut, cut}, calls: 5, nwaits: 4, wantErr: "gave up after 5 attempts"},
		{name: "retry-after too long", errs: []error{&llm.Error{Kind: llm.ErrRateLimit, RetryAfter: time.Hour}}, calls: 1, wantErr: "longer than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &flaky{errs: tc.errs}
			var waits []time.Duration
			m := WithRetry(f, RetryPolicy{Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }})
			var retries int
			var announced []llm.Retry
			var err error
			var resp *llm.Response
			for ev, e := range m.Stream(context.Background(), &llm.Request{}) {
				if e != nil {
					err = e
					break
				}
				switch ev.Type {
				case llm.EventRetry:
					retries++
					if ev.Retry != nil {
						announced = append(announced, *ev.Retry)
					}
				case llm.EventDone:
					resp = ev.Response
				}
			}
			// Each retry says which attempt comes, of how many, after
			// which wait and why: what a front end counts down.
			for i, r := range announced {
				if r.Attempt != i+2 || r.MaxAttempts != 5 || i >= len(waits) || r.Delay != waits[i] || !errors.Is(r.Err, tc.errs[i]) {
					t.Errorf("retry %d announced %+v (waited %v)", i, r, waits)
				}
			}
			if len(announced) != retries {
				t.Errorf("%d of %d retry events say their attempt and wait", len(announced), retries)
			}
			if int(f.calls.Load()) != tc.calls {
				t.Errorf("calls = %d, want %d", f.calls.Load(), tc.calls)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || resp == nil {
				t.Fatalf("err = %v, resp = %v", err, resp)
			}
			if tc.waits != nil && !equal(waits, tc.waits) {
				t.Errorf("waits = %v, want %v", waits, tc.waits)
			}
			if tc.waits == nil && len(waits) != tc.nwaits {
				t.Errorf("waits = %v, want %d", waits, tc.nwaits)
			}
			if retries != len(waits) {
				t.Errorf("%d retry events for %d waits", retries, len(waits))
			}
		})
	}
}

func equal(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	p := RetryPolicy{BaseDelay: time.Second, MaxDelay: 8 * time.Second}.withDefaults()
	for n, max := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		for range 50 {
			d, ok := p.delay(n, errors.New("x"))
			if !ok || d < max/2 || d > max {
				t.Fatalf("attempt %d: delay %v outside [%v, %v]", n, d, max/2, max)
			}
		}
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &flaky{errs: []error{&llm.Error{Kind: llm.ErrServer}}}
	m := WithRetry(f, RetryPolicy{Sleep: func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }})
	var err error
	for _, e := range m.Stream(ctx, &llm.Request{}) {
		if e != nil {
			err = e
		}
	}
	if !errors.Is(err, context.Canceled) || f.calls.Load() != 1 {
		t.Errorf("err = %v after %d calls", err, f.calls.Load())
	}
}

func TestCost(t *testing.T) {
	p := Pricing{Overrides: map[string]Price{"ollama:llama3.2": {Input: 1}, "qwen3-max": {Input: 2, Output: 4}}}
	u := llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadInputTokens: 1_000_000, CacheCreationInputTokens: 1_000_000}
	tests := []struct {
		ref  Ref
		want float64
		// unknown: no price, so the cost is unknown rather than 0.
		unknown bool
	}{
		{Ref{"anthropic", "claude-sonnet-5-5"}, 2 + 10 + 0.1 + 2.5, false},
		{Ref{"anthropic", "claude-opus-5-5"}, 4 + 20 + 0.2 + 5, false},
		{Ref{"anthropic", "claude-haiku-5-5"}, 0.1 + 0.5 + 0.01 + 0.125, false},
		{Ref{"anthropic", "claude-sonnet-4-5"}, 3 + 15 + 0.3 + 3.75, false},
		{Ref{"anthropic", "claude-sonnet-4-5-20250929"}, 3 + 15 + 0.3 + 3.75, false},
		{Ref{"openai", "gpt-4o-mini"}, 0.15 + 0.6 + 0.075, false},
		{Ref{"openai", "gpt-4o-2024-08-06"}, 2.5 + 10 + 1.25, false},
		{Ref{"ollama", "llama3.2"}, 1, false},
		{Ref{"openai", "qwen3-max"}, 6, false},
		{Ref{"openai", "unknown-model"}, 0, true},
		{Ref{"openai", "gpt-6-astra"}, 0, true},
		{Ref{"anthropic", "claude-unknown-9"}, 0, true},
		{Ref{"script", "demo.yaml"}, 0, true},
	}
	for _, tc := range tests {
		got, known := p.Cost(tc.ref, u).USD()
		if known == tc.unknown || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Cost(%s) = %v (known %v), want %v (known %v)", tc.ref, got, known, tc.want, !tc.unknown)
		}
	}
}
