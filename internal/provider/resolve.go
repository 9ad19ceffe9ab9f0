package provider

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/catalog"
	"github.com/cadre-dev/cadre/internal/provider/anthropic"
	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/internal/provider/openai"
	"github.com/cadre-dev/cadre/internal/provider/script"
	"github.com/cadre-dev/cadre/internal/suggest"
	"github.com/cadre-dev/cadre/llm"
)

// Endpoint configures one provider: the built-in "anthropic" and "openai",
// or a custom name (say "ollama") of one of those types.
type Endpoint struct {
	Type      string // "anthropic" | "openai"; empty means the name itself
	BaseURL   string
	APIKey    string
	APIKeyEnv string // read the key from this variable instead
	// Headers go with every request; Organization (openai only) as
	// OpenAI-Organization.
	Headers      map[string]string
	Organization string
}

// Config is what resolution needs from the settings.
type Config struct {
	DefaultProvider string
	Aliases         map[string]string
	Endpoints       map[string]Endpoint
	// Dir is where a relative scenario path of the scripted model resolves.
	Dir        string
	Getenv     func(string) string
	HTTPClient *http.Client
	Retry      RetryPolicy
	// Limits bound every stream of the anthropic and openai models: a
	// stall ends in an error that Retry retries.
	Limits guard.Limits
	// Now is the clock that model lifecycles are judged by; nil means
	// time.Now.
	Now func() time.Time
}

// Ref is a parsed model name.
type Ref struct {
	Provider string // endpoint name: "anthropic", "openai", "script" or custom
	Model    string // the provider's own id, or the scenario path for script
}

func (r Ref) String() string { return r.Provider + ":" + r.Model }

// Parse resolves aliases and the provider of name without building anything.
func Parse(name string, cfg Config) (Ref, error) {
	orig := name
	name = strings.TrimSpace(name)
	if name == "" {
		return Ref{}, configErr("no model given: pass --model or set \"model\" in settings")
	}
	for range 4 { // aliases may point at aliases; bounded to stop cycles
		// Claude Code's short names come from the catalogue; settings
		// may override them.
		target, ok := cfg.Aliases[name]
		if !ok {
			target, ok = catalog.Default().Alias(name)
		}
		if !ok {
			break
		}
		name = target
	}
	if p, m, ok := strings.Cut(name, ":"); ok {
		if m == "" {
			return Ref{}, configErr(fmt.Sprintf("model %q names no model after %q", orig, p+":"))
		}
		if !cfg.Known(p) {
			return Ref{}, configErr(fmt.Sprintf("model %q: unknown provider %q%s (known: %s)", orig, p, didYouMean(p, cfg.providers()), strings.Join(cfg.providers(), ", ")))
		}
		return cfg.live(Ref{Provider: p, Model: m})
	}
	if p, m, ok := strings.Cut(name, "/"); ok && cfg.Known(p) && m != "" {
		return cfg.live(Ref{Provider: p, Model: m})
	}
	switch {
	case strings.HasPrefix(name, "claude-"):
		return cfg.live(Ref{Provider: "anthropic", Model: name})
	case strings.HasPrefix(name, "gpt-"), strings.HasPrefix(name, "chatgpt-"),
		strings.HasPrefix(name, "o1"), strings.HasPrefix(name, "o3"), strings.HasPrefix(name, "o4"):
		return cfg.live(Ref{Provider: "openai", Model: name})
	}
	if cfg.DefaultProvider != "" {
		if !cfg.Known(cfg.DefaultProvider) {
			return Ref{}, configErr(fmt.Sprintf("defaultProvider %q is not a known provider (known: %s)", cfg.DefaultProvider, strings.Join(cfg.providers(), ", ")))
		}
		return cfg.live(Ref{Provider: cfg.DefaultProvider, Model: name})
	}
	if hint := didYouMean(name, cfg.modelNames()); hint != "" {
		return Ref{}, configErr(fmt.Sprintf("cannot tell the provider of model %q%s", orig, hint))
	}
	return Ref{}, configErr(fmt.Sprintf("cannot tell the provider of model %q: write it as provider:model (e.g. anthropic:%s or openai:%s) or set defaultProvider", orig, name, name))
}

// modelNames are the names a model may be given by: the aliases of the
// settings and of the catalogue, and the catalogue's model ids, sorted
// (aliases first) so that the nearest of equally near names is stable.
func (c Config) modelNames() []string {
	aliases := slices.Sorted(maps.Keys(c.Aliases))
	for a := range catalog.Default().Aliases {
		if _, ok := c.Aliases[a]; !ok {
			aliases = append(aliases, a)
		}
	}
	slices.Sort(aliases[len(c.Aliases):])
	var ids []string
	for _, m := range catalog.Default().Models {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return append(aliases, ids...)
}

// didYouMean is ` (did you mean "x"?)` for the candidate nearest to name
// by edit distance, or "" when none is near enough to be a typo of it.
func didYouMean(name string, candidates []string) string {
	if s, ok := suggest.Closest(name, candidates); ok {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// Lifecycle says where ref's model stands today, by the catalogue, and
// what to tell the user: a deprecated model's warning, a retired one's
// refusal, each naming the replacement. Only the providers' own endpoints
// ("anthropic", "openai") are judged: a custom endpoint (a gateway, a
// local server) may serve any name it likes.
//
// A provider profile (a custom name in Endpoints) with no base URL of
// its own talks to its type's own API on another account: its models
// are judged as that provider's.
func (c Config) Lifecycle(ref Ref) (catalog.State, string) {
	typ, ok := c.official(ref.Provider)
	if !ok {
		return catalog.Active, ""
	}
	m, ok := catalog.Default().Lookup(ref.Model)
	if !ok || m.Provider != typ {
		return catalog.Active, ""
	}
	now := time.Now()
	if c.Now != nil {
		now = c.Now()
	}
	return m.State(now), m.Notice(now)
}

// official returns the type of provider p when its requests go to that
// type's own API: the built-in anthropic and openai, or a profile that
// sets no base URL.
func (c Config) official(p string) (string, bool) {
	if p == "anthropic" || p == "openai" {
		return p, true
	}
	ep, ok := c.Endpoints[p]
	if !ok || ep.BaseURL != "" || (ep.Type != "anthropic" && ep.Type != "openai") {
		return "", false
	}
	return ep.Type, true
}

// live refuses a retired model: a request to it can only fail, later and
// less clearly.
func (c Config) live(ref Ref) (Ref, error) {
	if st, notice := c.Lifecycle(ref); st == catalog.RetiredState {
		return Ref{}, configErr(notice)
	}
	return ref, nil
}

// Resolve builds the model named name, wrapped in cfg.Retry.
func Resolve(name string, cfg Config) (llm.Model, error) {
	ref, err := Parse(name, cfg)
	if err != nil {
		return nil, err
	}
	m, err := build(ref, cfg)
	if err != nil {
		return nil, err
	}
	return WithRetry(m, cfg.Retry), nil
}

func build(ref Ref, cfg Config) (llm.Model, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if ref.Provider == "script" {
		path := ref.Model
		if !filepath.IsAbs(path) && cfg.Dir != "" {
			path = filepath.Join(cfg.Dir, path)
		}
		m, err := script.Load(path)
		if err != nil {
			return nil, &llm.Error{Kind: llm.ErrConfig, Provider: "script", Message: err.Error(), Err: err}
		}
		return m, nil
	}
	ep := cfg.Endpoints[ref.Provider]
	typ := ep.Type
	if typ == "" {
		typ = ref.Provider
	}
	// The key is read now, when the model is first used, never stored in
	// settings that cadre writes back or shows.
	key := ep.APIKey
	if key == "" && ep.APIKeyEnv != "" {
		key = getenv(ep.APIKeyEnv)
		if key == "" {
			// Never another key in its place: a profile names an account.
			return nil, &llm.Error{Kind: llm.ErrAuth, Provider: ref.Provider, Message: ep.APIKeyEnv + " is not set (providers." + ref.Provider + ".apiKeyEnv names it)"}
		}
	}
	var (
		m   llm.Model
		err error
	)
	switch typ {
	case "anthropic":
		m, err = anthropic.New(anthropic.Config{Model: ref.Model, APIKey: key, BaseURL: ep.BaseURL, Getenv: getenv, HTTPClient: cfg.HTTPClient, Limits: cfg.Limits,
			Headers: ep.Headers, Provider: ref.Provider})
	case "openai":
		m, err = openai.New(openai.Config{Model: ref.Model, APIKey: key, BaseURL: ep.BaseURL, Getenv: getenv, HTTPClient: cfg.HTTPClient, Provider: ref.Provider, Limits: cfg.Limits,
			Headers: ep.Headers, Organization: ep.Organization})
	default:
		return nil, configErr(fmt.Sprintf("provider %q has type %q; want anthropic or openai", ref.Provider, typ))
	}
	if err != nil {
		return nil, err
	}
	secrets := []string{key}
	for _, v := range builtinKeyVars {
		secrets = append(secrets, getenv(v))
	}
	return redact(m, secrets), nil
}

// builtinKeyVars are the variables the anthropic and openai adapters read
// a key from when the settings give none.
var builtinKeyVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY"}

// KeyVariables names every environment variable a model of cfg may take
// its key from: the providers' own and each profile's apiKeyEnv. No
// process the runtime starts may inherit them (docs/security.md).
func KeyVariables(cfg Config) []string {
	out := slices.Clone(builtinKeyVars)
	for _, ep := range cfg.Endpoints {
		if ep.APIKeyEnv != "" && !slices.Contains(out, ep.APIKeyEnv) {
			out = append(out, ep.APIKeyEnv)
		}
	}
	sort.Strings(out)
	return out
}

// Known reports whether p names a provider: built in, or an endpoint
// (a profile) of the settings.
func (c Config) Known(p string) bool {
	if p == "anthropic" || p == "openai" || p == "script" {
		return true
	}
	_, ok := c.Endpoints[p]
	return ok
}

func (c Config) providers() []string {
	out := []string{"anthropic", "openai", "script"}
	var custom []string
	for name := range c.Endpoints {
		if !slices.Contains(out, name) {
			custom = append(custom, name)
		}
	}
	sort.Strings(custom)
	return append(out, custom...)
}

func configErr(msg string) error {
	return &llm.Error{Kind: llm.ErrConfig, Message: msg}
}
