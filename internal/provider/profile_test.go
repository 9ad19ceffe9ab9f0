package provider

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

const (
	keyA = "sk-main-AAAAAAAAAAAAAAAA"
	keyB = "sk-reviewer-BBBBBBBBBBBBBBBB"
)

func hello() *llm.Request {
	return &llm.Request{Messages: []llm.Message{llm.UserText("hi")}, MaxTokens: 64}
}

// TestProfileRequestsCarryTheProfilesKey: two accounts on two servers.
// The main model (the provider's own variables) reaches server A with
// key A; a profile's model reaches the profile's server with the key its
// apiKeyEnv names, its headers and organization — and never key A.
func TestProfileRequestsCarryTheProfilesKey(t *testing.T) {
	reply := func(testkit.Request) testkit.Reply { return testkit.Reply{Text: "ok"} }
	for _, typ := range []string{"anthropic", "openai"} {
		t.Run(typ, func(t *testing.T) {
			var urlA, urlB string
			var reqsA, reqsB func() []testkit.Request
			if typ == "anthropic" {
				a, b := testkit.NewAnthropic(t, reply), testkit.NewAnthropic(t, reply)
				urlA, urlB, reqsA, reqsB = a.URL, b.URL, a.Requests, b.Requests
			} else {
				a, b := testkit.NewOpenAI(t, reply), testkit.NewOpenAI(t, reply)
				urlA, urlB, reqsA, reqsB = a.URL, b.URL, a.Requests, b.Requests
			}
			env := map[string]string{"REVIEWER_KEY": keyB}
			if typ == "anthropic" {
				env["ANTHROPIC_API_KEY"], env["ANTHROPIC_BASE_URL"] = keyA, urlA
			} else {
				env["OPENAI_API_KEY"], env["OPENAI_BASE_URL"] = keyA, urlA
			}
			ep := Endpoint{Type: typ, BaseURL: urlB, APIKeyEnv: "REVIEWER_KEY", Headers: map[string]string{"X-Team": "review"}}
			if typ == "openai" {
				ep.Organization = "org-review"
			}
			cfg := Config{Getenv: func(k string) string { return env[k] }, Endpoints: map[string]Endpoint{"reviewer-acct": ep}}
			model := map[string]string{"anthropic": "claude-sonnet-5-5", "openai": "gpt-4o-mini"}[typ]
			for _, name := range []string{typ + ":" + model, "reviewer-acct:" + model} {
				m, err := Resolve(name, cfg)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if m.Name() != name {
					t.Errorf("Name() = %q, want %q: a run recorded under it must resume on the same account", m.Name(), name)
				}
				if _, err := llm.Collect(m.Stream(context.Background(), hello())); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			a, b := reqsA(), reqsB()
			if len(a) != 1 || len(b) != 1 {
				t.Fatalf("server A got %d requests, B %d; want 1 each", len(a), len(b))
			}
			if got := key(a[0]); got != keyA {
				t.Errorf("the main model sent key %q, want key A", got)
			}
			if got := key(b[0]); got != keyB {
				t.Errorf("the profile sent key %q, want key B", got)
			}
			if got := b[0].Header.Get("X-Team"); got != "review" {
				t.Errorf("profile header X-Team = %q", got)
			}
			if a[0].Header.Get("X-Team") != "" {
				t.Error("the profile's header reached the main account")
			}
			if typ == "openai" {
				if got := b[0].Header.Get("OpenAI-Organization"); got != "org-review" {
					t.Errorf("OpenAI-Organization = %q", got)
				}
			}
			if got := b[0].JSON()["model"]; got != model {
				t.Errorf("the profile sent model %v, want the model part %s", got, model)
			}
		})
	}
}

// key is the key a request carried, however its provider sends it.
func key(r testkit.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

// TestProfileWithoutItsKeyNeverFallsBack: a profile whose variable is
// unset fails naming the variable and the profile; the main key is not
// sent in its place.
func TestProfileWithoutItsKeyNeverFallsBack(t *testing.T) {
	srv := testkit.NewAnthropic(t, func(testkit.Request) testkit.Reply { return testkit.Reply{Text: "ok"} })
	env := map[string]string{"ANTHROPIC_API_KEY": keyA}
	cfg := Config{Getenv: func(k string) string { return env[k] },
		Endpoints: map[string]Endpoint{"reviewer-acct": {Type: "anthropic", BaseURL: srv.URL, APIKeyEnv: "REVIEWER_KEY"}}}
	_, err := Resolve("reviewer-acct:claude-sonnet-5-5", cfg)
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrAuth || !strings.Contains(err.Error(), "REVIEWER_KEY is not set (providers.reviewer-acct.apiKeyEnv names it)") {
		t.Fatalf("err = %v, want an auth error naming REVIEWER_KEY and the profile", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests went out", n)
	}
}

// TestProviderErrorsNeverHoldTheKey: a gateway that echoes the request's
// key in its error body (some proxies do) — the error the run sees, and
// everything built from it, holds no key; its kind and status stay.
func TestProviderErrorsNeverHoldTheKey(t *testing.T) {
	for _, typ := range []string{"anthropic", "openai"} {
		t.Run(typ, func(t *testing.T) {
			echo := func(r testkit.Request) testkit.Reply {
				return testkit.Reply{Status: 401, ErrorMessage: "invalid key " + key(r) + " for this gateway"}
			}
			var url string
			if typ == "anthropic" {
				url = testkit.NewAnthropic(t, echo).URL
			} else {
				url = testkit.NewOpenAI(t, echo).URL
			}
			env := map[string]string{"REVIEWER_KEY": keyB}
			cfg := Config{Getenv: func(k string) string { return env[k] },
				Endpoints: map[string]Endpoint{"gw": {Type: typ, BaseURL: url, APIKeyEnv: "REVIEWER_KEY"}}}
			m, err := Resolve("gw:some-model", cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = llm.Collect(m.Stream(context.Background(), hello()))
			if err == nil {
				t.Fatal("no error")
			}
			var le *llm.Error
			if !errors.As(err, &le) || le.Kind != llm.ErrAuth || le.Status != 401 {
				t.Errorf("err = %#v, want the auth error kept", err)
			}
			for e := error(err); e != nil; e = errors.Unwrap(e) {
				if strings.Contains(e.Error(), keyB) {
					t.Fatalf("the error chain holds the key: %v", e)
				}
			}
			if !strings.Contains(err.Error(), "invalid key [redacted] for this gateway") {
				t.Errorf("err = %v, want the server's message with the key redacted", err)
			}
		})
	}
}

// TestProfileLifecycle: a profile with no base URL of its own reaches its
// type's own API (another account), so the catalogue's lifecycle judges
// its model part; one with a base URL is a custom endpoint's business.
func TestProfileLifecycle(t *testing.T) {
	const retired = "claude-opus-4-1" // retired by the catalogue (TestParse)
	cfg := Config{Endpoints: map[string]Endpoint{
		"acct": {Type: "anthropic", APIKeyEnv: "ACCT_KEY"},
		"gw":   {Type: "anthropic", BaseURL: "http://127.0.0.1:9/v1", APIKeyEnv: "GW_KEY"},
	}}
	if _, err := Parse("acct:"+retired, cfg); err == nil || !strings.Contains(err.Error(), "retired") {
		t.Errorf("acct:%s: err = %v, want it refused as retired", retired, err)
	}
	if _, err := Parse("gw:"+retired, cfg); err != nil {
		t.Errorf("gw:%s: %v; a custom endpoint serves what it likes", retired, err)
	}
}

func TestKeyVariables(t *testing.T) {
	got := KeyVariables(Config{Endpoints: map[string]Endpoint{
		"acct": {Type: "anthropic", APIKeyEnv: "ACCT_KEY"}, "local": {Type: "openai", BaseURL: "http://127.0.0.1:1/v1"},
		"twin": {Type: "openai", APIKeyEnv: "ACCT_KEY"},
	}})
	want := "ACCT_KEY ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN OPENAI_API_KEY"
	if strings.Join(got, " ") != want {
		t.Errorf("KeyVariables = %v, want %s", got, want)
	}
}
