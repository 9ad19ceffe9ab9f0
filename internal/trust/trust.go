package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Item is one thing a project asks for that widens what cadre does or
// runs a command: an allow rule, a hook command, an MCP server's command
// line, a provider override, an agent file's permissionMode.
type Item struct {
	// Source is the file that asks for it.
	Source string `json:"source"`
	// Key says what it is, as the file names it: "permissions.allow",
	// "hooks.SessionStart", "mcpServers.gh", "permissionMode".
	Key string `json:"key"`
	// Value is what it asks for, in full: the rule, the command line.
	Value string `json:"value"`
}

func (i Item) String() string {
	if i.Value == "" {
		return i.Source + ": " + i.Key
	}
	return i.Source + ": " + i.Key + ": " + i.Value
}

// Digest is the hex SHA-256 of items in a canonical order: two lists of
// the same items, in any order, have the same digest; any change of a
// source, key or value changes it.
func Digest(items []Item) string {
	sorted := slices.Clone(items)
	slices.SortFunc(sorted, func(a, b Item) int {
		return strings.Compare(a.Source+"\x00"+a.Key+"\x00"+a.Value, b.Source+"\x00"+b.Key+"\x00"+b.Value)
	})
	h := sha256.New()
	for _, it := range sorted {
		// JSON strings: no separator inside a value can forge a boundary.
		b, _ := json.Marshal([3]string{it.Source, it.Key, it.Value})
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Value renders a setting's JSON value for an Item: compact, keys sorted.
func Value(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Warning is the one line a run in an untrusted project prints: how many
// items were skipped, which, and how to review them. changed says that
// the project was trusted before it changed what it asks for.
func Warning(items []Item, changed bool) string {
	if len(items) == 0 {
		return ""
	}
	var keys []string
	for _, it := range items {
		k := shortSource(it.Source) + " " + it.Key
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	why := "this workspace is not trusted"
	if changed {
		why = "this workspace changed what it asks for since you trusted it"
	}
	return fmt.Sprintf("%s: skipped %d project setting(s) that widen what runs (%s); review them with `cadre trust`",
		why, len(items), strings.Join(keys, ", "))
}

// shortSource keeps a source readable in the one-line warning: the part
// from the project's dot-directory on.
func shortSource(src string) string {
	for _, d := range []string{".cadre", ".claude", ".opencode", ".mcp.json", "workspace"} {
		if i := strings.LastIndex(src, string('/')+d); i >= 0 {
			return src[i+1:]
		}
	}
	return src
}
