package app

import (
	"fmt"

	"github.com/cadre-dev/cadre/internal/catalog"
	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/config"
	"github.com/cadre-dev/cadre/internal/provider"
	"github.com/cadre-dev/cadre/llm"
)

// ProviderConfig is where model requests go and with which keys.
func (a *App) ProviderConfig() provider.Config {
	s := a.Cfg.Settings
	// Where requests go and with which key is the user's alone, trusted
	// project or not: a repository's baseURL would receive the user's key
	// on the first request, its apiKeyEnv send any variable, its aliases
	// re-point --model (issue 22).
	mine := a.Cfg.Personal
	eps := map[string]provider.Endpoint{}
	for name, p := range mine.Providers {
		eps[name] = provider.Endpoint{Type: p.Type, BaseURL: p.BaseURL, APIKey: p.APIKey, APIKeyEnv: p.APIKeyEnv,
			Headers: p.Headers, Organization: p.Organization}
	}
	return provider.Config{
		DefaultProvider: mine.DefaultProvider, Aliases: mine.Aliases, Endpoints: eps,
		Dir: a.Cwd, Getenv: a.Getenv, HTTPClient: a.cfg.HTTPClient, Limits: s.Limits.Stream(), Now: a.Now,
	}
}

// CheckPrice is what refuses a model with no price under
// Config.MaxBudgetUSD: a budget cannot be kept by a run whose spending it
// cannot see. nil without a budget, when any model may run.
func (a *App) CheckPrice() func(provider.Ref) error {
	if a.cfg.MaxBudgetUSD <= 0 {
		return nil
	}
	return func(ref provider.Ref) error {
		if _, ok := a.Pricing.Lookup(ref); ok {
			return nil
		}
		return fmt.Errorf(`--max-budget-usd cannot be kept on model %s: its price is unknown; price it in settings, e.g. {"pricing": {%q: {"input": 3, "output": 15}}} (USD per million tokens)`, ref, ref.Model)
	}
}

// Model resolves a model name once per runtime; a replay's runtime has
// the replay's model whatever the name.
func (a *App) Model(name string) (llm.Model, provider.Ref, error) {
	if h := a.cfg.Replay; h != nil {
		return h.Model, h.Ref, nil
	}
	return a.ResolveModel(name)
}

// ResolveModel builds the model name names, ignoring a replay's.
func (a *App) ResolveModel(name string) (llm.Model, provider.Ref, error) {
	a.modelMu.Lock()
	defer a.modelMu.Unlock()
	if m, ok := a.models[name]; ok {
		return m.model, m.ref, nil
	}
	if l := a.cfg.LLM; l != nil && name == "sdk:"+l.Name() {
		// The program's own model, by the name its runs record (a child
		// dispatched to another node inherits it by that name).
		return l, provider.Ref{Provider: "sdk", Model: l.Name()}, nil
	}
	pc := a.ProviderConfig()
	ref, err := provider.Parse(name, pc)
	if err != nil {
		return nil, provider.Ref{}, err
	}
	if w := a.notice(pc, ref); w != "" {
		a.Log.Warn(w)
	}
	m, err := provider.Resolve(name, pc)
	if err != nil {
		return nil, provider.Ref{}, err
	}
	a.models[name] = resolved{m, ref}
	return m, ref, nil
}

// notice warns, once per model, that ref's model is deprecated; it
// returns the warning when this call is the one that gave it. The caller
// holds modelMu, or is New, before anything else can resolve a model.
func (a *App) notice(pc provider.Config, ref provider.Ref) string {
	st, text := pc.Lifecycle(ref)
	if st != catalog.Deprecated || a.noticed[ref.String()] {
		return ""
	}
	if a.noticed == nil {
		a.noticed = map[string]bool{}
	}
	a.noticed[ref.String()] = true
	return text
}

// Compaction is the settings' compaction for children (nil: off).
func Compaction(c config.Compaction) *compact.Config {
	if c.Disabled {
		return nil
	}
	return &compact.Config{Window: c.Window, Threshold: c.Threshold, KeepRecent: c.KeepRecent}
}
