package config

import (
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/cadre-dev/cadre/internal/excerpt"
)

// providerName reports whether s may name a provider profile: it is the
// prefix of "name:model", so no ":" or "/", and nothing a shell or a
// listing would need to quote.
func providerName(s string) bool {
	for i, c := range s {
		if !alnum(c) && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return s != ""
}

// envName reports whether s is a portable environment variable name.
func envName(s string) bool {
	for i, c := range s {
		if !alnum(c) && c != '_' || i == 0 && c >= '0' && c <= '9' {
			return false
		}
	}
	return s != ""
}

func alnum(c rune) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

// reservedProviders name models that are not providers' endpoints: the
// scripted model, the SDK's own model, remote agents.
var reservedProviders = []string{"script", "sdk", "a2a"}

// keyHeaders carry the key itself: cadre sets them from apiKey or
// apiKeyEnv, and a key written into headers would be a key on disk that
// no scrubbing knows about.
var keyHeaders = []string{"authorization", "x-api-key", "api-key", "proxy-authorization"}

// validate checks one providers entry; bad reports a problem at a key
// path. name is the entry's key.
func (p Provider) validate(name string, bad func(key, format string, args ...any) error) error {
	at := func(key string) string { return join(join("providers", name), key) }
	switch {
	case !providerName(name):
		return bad(join("providers", name), "a provider name is letters, digits, '.', '_' and '-', starting with a letter or digit (it is the prefix of name:model), got %s", excerpt.Quote(name))
	case slices.Contains(reservedProviders, name):
		return bad(join("providers", name), "%q is reserved (it names %s), choose another name", name, map[string]string{"script": "the scripted model", "sdk": "a Go program's own model", "a2a": "remote agents"}[name])
	}
	typ := p.Type
	if typ == "" && (name == "anthropic" || name == "openai") {
		typ = name
	}
	switch typ {
	case "anthropic", "openai":
	case "":
		return bad(at("type"), `missing: a custom provider needs "type": "anthropic" or "openai"`)
	default:
		return bad(at("type"), `want "anthropic" or "openai", got %s`, excerpt.Quote(p.Type))
	}
	if p.APIKeyEnv != "" && !envName(p.APIKeyEnv) {
		return bad(at("apiKeyEnv"), "want the name of an environment variable (letters, digits and '_', not starting with a digit), got %s", excerpt.Quote(p.APIKeyEnv))
	}
	if p.BaseURL != "" {
		u, err := url.Parse(p.BaseURL)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return bad(at("baseURL"), "want an http(s) URL such as https://gateway.example/v1, got %s", excerpt.Quote(p.BaseURL))
		case u.User != nil:
			// Never quoted: the user part is a credential.
			return bad(at("baseURL"), "the URL holds a user name or password: put the key in the environment and name it with apiKeyEnv")
		}
	}
	for _, h := range slices.Sorted(func(yield func(string) bool) {
		for k := range p.Headers {
			if !yield(k) {
				return
			}
		}
	}) {
		switch {
		case !httpguts.ValidHeaderFieldName(h):
			return bad(at("headers"), "%s is not a valid HTTP header name", excerpt.Quote(h))
		case slices.Contains(keyHeaders, strings.ToLower(h)):
			return bad(join(at("headers"), h), "the key is not a header: export it and name the variable with apiKeyEnv (cadre sends it as the provider expects)")
		case !httpguts.ValidHeaderFieldValue(p.Headers[h]):
			return bad(join(at("headers"), h), "the value holds a line break or control character")
		}
	}
	if p.Organization != "" && typ != "openai" {
		return bad(at("organization"), "only an openai provider has an organization; for a gateway's own header use headers")
	}
	return nil
}

// dropProjectProviders removes providers from a settings file inside the
// project, trusted or not, and says so. A provider profile decides where
// requests go and which key they carry: a repository's file (or one a
// build script or a tool wrote into the working tree) that could define
// or re-point one would receive the key of any variable it names. Only the
// user settings, --settings (the SDK's Options.Settings) and the
// environment define them.
func dropProjectProviders(path string, layer *Settings, generic map[string]any) []Warning {
	if _, ok := generic["providers"]; !ok {
		return nil
	}
	delete(generic, "providers")
	layer.Providers = nil
	return []Warning{{File: path, Key: "providers",
		Message: "ignored in a project's files, trusted or not: provider profiles (endpoints, keys, headers) come only from your user settings ($CADRE_HOME/settings.json), --settings or the environment"}}
}
