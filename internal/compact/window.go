package compact

import (
	"strings"

	"github.com/cadre-dev/cadre/internal/catalog"
)

// windows are the documented context windows, in tokens, of well-known
// model families, keyed by the provider's model id, for the models the
// catalogue (internal/catalog) does not list or lists without a window. A longer id matches its
// family's key by prefix ("claude-sonnet-4-5-20250929" → "claude",
// "gpt-4o-mini" → "gpt-4o", "gpt-5.1" → "gpt-5"); the longest key wins.
var windows = map[string]int64{
	"claude":      200000,
	"gpt-4o":      128000,
	"gpt-4-turbo": 128000,
	"gpt-4.1":     1047576,
	"gpt-5":       400000,
	"o1":          200000,
	"o1-mini":     128000,
	"o3":          200000,
	"o4-mini":     200000,
}

// Window returns the context window, in tokens, of a model id (the
// provider's id, e.g. "claude-sonnet-5-5", "gpt-4o-mini"), or 0 when it is
// not known: the catalogue's, else its family's. A routing prefix
// ("anthropic/claude-sonnet-4.5") is ignored.
func Window(model string) int64 {
	model = strings.ToLower(model)
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	if m, ok := catalog.Default().Lookup(model); ok && m.Context > 0 {
		return m.Context
	}
	best, window := -1, int64(0)
	for key, w := range windows {
		if len(key) > best && matches(model, key) {
			best, window = len(key), w
		}
	}
	return window
}

// matches reports whether model is key or a member of key's family: key
// followed by a separator, so "o3" matches "o3-mini" but not "o30".
func matches(model, key string) bool {
	rest, ok := strings.CutPrefix(model, key)
	return ok && (rest == "" || rest[0] == '-' || rest[0] == '.')
}
