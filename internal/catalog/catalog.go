package catalog

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

//go:embed models.json
var modelsJSON []byte

// Price is a list price in USD per million tokens. CacheWrite is the
// five-minute cache write (the one cadre asks for).
type Price struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Model is one row of the table.
type Model struct {
	Provider string   `json:"provider"`
	ID       string   `json:"id"`
	Names    []string `json:"names,omitempty"` // other ids that reach it
	// Context is the context window in tokens; 0 when not known.
	Context int64 `json:"context,omitempty"`
	// MaxOutput is the most tokens one reply may have; 0 when not known.
	MaxOutput int64 `json:"maxOutput,omitempty"`
	// Price is nil for a model whose price cadre does not know: its cost
	// is unknown, never 0.
	Price *Price `json:"price,omitempty"`
	// Retires is the provider's announced shutdown date (YYYY-MM-DD): the
	// model is deprecated before it and retired from it on.
	Retires string `json:"retires,omitempty"`
	// Retired marks a model that no longer answers.
	Retired bool `json:"retired,omitempty"`
	// Replacement is the provider's recommended successor.
	Replacement string `json:"replacement,omitempty"`
}

// State is where a model is in its lifecycle.
type State int

const (
	Active State = iota
	Deprecated
	RetiredState
)

func (s State) String() string {
	return [...]string{"active", "deprecated", "retired"}[s]
}

// State says where m stands on the day of now (UTC).
func (m Model) State(now time.Time) State {
	if m.Retired {
		return RetiredState
	}
	if m.Retires == "" {
		return Active
	}
	if now.UTC().Format(time.DateOnly) >= m.Retires {
		return RetiredState
	}
	return Deprecated
}

// Notice is what a user is told about m on the day of now: "" for an
// active model, a warning for a deprecated one and the refusal for a
// retired one, each naming the replacement.
func (m Model) Notice(now time.Time) string {
	instead := ""
	if m.Replacement != "" {
		instead = "; use " + m.Replacement + " instead"
		if a := aliasFor(m.Provider + ":" + m.Replacement); a != "" {
			instead += " (--model " + a + ")"
		}
	}
	switch m.State(now) {
	case Deprecated:
		return fmt.Sprintf("model %s is deprecated and retires on %s%s", m.ID, m.Retires, instead)
	case RetiredState:
		if m.Retires != "" {
			return fmt.Sprintf("model %s was retired on %s and no longer answers%s", m.ID, m.Retires, instead)
		}
		return fmt.Sprintf("model %s is retired and no longer answers%s", m.ID, instead)
	}
	return ""
}

// Table is the parsed catalogue.
type Table struct {
	Aliases map[string]string `json:"aliases"`
	Models  []Model           `json:"models"`
	byName  map[string]int
}

// Default returns the embedded table. It is parsed on first use (cadre's
// start-up pays nothing for it until a model is resolved) and is never
// changed after: callers must not modify what it returns.
var Default = sync.OnceValue(func() *Table {
	t, err := Parse(modelsJSON)
	if err != nil {
		// The file is embedded and checked by the package's tests.
		panic("catalog: models.json: " + err.Error())
	}
	return t
})

// Parse reads a table and checks it: every id and name unique, every
// alias and replacement naming a model of the table, dates well formed.
func Parse(data []byte) (*Table, error) {
	var t Table
	dec := json.NewDecoder(bytes.NewReader(data))
	var raw struct {
		About   string            `json:"about"`
		Aliases map[string]string `json:"aliases"`
		Models  []Model           `json:"models"`
	}
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	t.Aliases, t.Models = raw.Aliases, raw.Models
	t.byName = make(map[string]int, len(t.Models)*2)
	for i, m := range t.Models {
		if m.Provider == "" || m.ID == "" {
			return nil, fmt.Errorf("model %d: provider and id are required", i)
		}
		for _, n := range append([]string{m.ID}, m.Names...) {
			if _, dup := t.byName[n]; dup {
				return nil, fmt.Errorf("model %s: name %q appears twice", m.ID, n)
			}
			t.byName[n] = i
		}
		if m.Retires != "" {
			if _, err := time.Parse(time.DateOnly, m.Retires); err != nil {
				return nil, fmt.Errorf("model %s: retires %q is not a YYYY-MM-DD date", m.ID, m.Retires)
			}
		}
		if (m.Retires != "" || m.Retired) && m.Replacement == "" {
			return nil, fmt.Errorf("model %s: a deprecated or retired model needs a replacement", m.ID)
		}
	}
	for _, m := range t.Models {
		if m.Replacement == "" {
			continue
		}
		r, ok := t.Lookup(m.Replacement)
		if !ok {
			return nil, fmt.Errorf("model %s: replacement %q is not in the table", m.ID, m.Replacement)
		}
		if r.Retires != "" || r.Retired {
			return nil, fmt.Errorf("model %s: replacement %q is itself deprecated or retired", m.ID, m.Replacement)
		}
	}
	for alias, target := range t.Aliases {
		p, id, ok := strings.Cut(target, ":")
		m, found := t.Lookup(id)
		if !ok || !found || m.Provider != p {
			return nil, fmt.Errorf("alias %s: %q is not provider:id of a model in the table", alias, target)
		}
	}
	return &t, nil
}

// Lookup finds a model by its id, one of its other names, or a dated
// snapshot of either ("claude-sonnet-4-5-20250929", "gpt-5-2025-08-07").
// A routing prefix ("anthropic/claude-sonnet-5-5") is ignored. Nothing
// else matches: an id the table does not list is unknown, so that a new
// model is never priced or retired as an older one with a similar name.
func (t *Table) Lookup(id string) (Model, bool) {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	if i, ok := t.byName[id]; ok {
		return t.Models[i], true
	}
	if base, ok := undated(id); ok {
		if i, ok := t.byName[base]; ok {
			return t.Models[i], true
		}
	}
	return Model{}, false
}

// Alias returns what a short name stands for ("sonnet" →
// "anthropic:claude-sonnet-5-5").
func (t *Table) Alias(name string) (string, bool) {
	target, ok := t.Aliases[name]
	return target, ok
}

func aliasFor(target string) string {
	for a, tg := range Default().Aliases {
		if tg == target {
			return a
		}
	}
	return ""
}

// undated strips a snapshot date: "-YYYYMMDD" or "-YYYY-MM-DD".
func undated(id string) (string, bool) {
	if n := len(id); n > 9 && id[n-9] == '-' && digits(id[n-8:]) {
		return id[:n-9], true
	}
	if n := len(id); n > 11 && id[n-11] == '-' && id[n-6] == '-' && id[n-3] == '-' &&
		digits(id[n-10:n-6]) && digits(id[n-5:n-3]) && digits(id[n-2:]) {
		return id[:n-11], true
	}
	return "", false
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
