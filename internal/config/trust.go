package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/internal/provider/guard"
	"github.com/cadre-dev/cadre/internal/trust"
	"github.com/cadre-dev/cadre/internal/worktree"
)

// narrowKeys are the top-level keys an untrusted project's settings keep:
// those that can only narrow what runs, or choose nothing that costs or
// reaches out. Every other key is skipped and listed (an allowlist, so
// that a key added later is skipped until someone decides otherwise).
var narrowKeys = []string{"$schema", "disableAllHooks", "disabledMcpjsonServers", "model", "compaction", "maxTurns", "limits", "permissions",
	// What is left of a project's sandbox block narrows: dropProjectSandbox
	// has removed the rest.
	"sandbox"}

// narrowPermissions are the keys of permissions an untrusted project
// keeps: rules that refuse or ask.
var narrowPermissions = []string{"deny", "ask"}

// narrow removes from one project layer what an untrusted project may not
// ask for, and returns it. apply false leaves the layer as it is (a
// trusted project): the list is the same either way, since it is what
// the project asks for. merged is the layers below, for "lower only".
func narrow(path string, layer *Settings, generic map[string]any, merged Settings, apply bool) []trust.Item {
	var out []trust.Item
	skip := func(key string, v any) {
		out = append(out, trust.Item{Source: path, Key: key, Value: trust.Value(v)})
	}
	for _, key := range slices.Sorted(mapKeys(generic)) {
		val := generic[key]
		if val == nil {
			continue
		}
		switch {
		case key == "permissions":
			perms, ok := val.(map[string]any)
			if !ok {
				continue
			}
			for _, pk := range slices.Sorted(mapKeys(perms)) {
				if slices.Contains(narrowPermissions, pk) || perms[pk] == nil {
					continue
				}
				if pk == "task" {
					// Spawn rules: deny and ask entries narrow; an allow
					// entry is a grant. The last match wins, so dropping
					// allows never widens.
					var kept permission.TaskRules
					for _, r := range layer.Permissions.Task {
						if r.Action == permission.ActionAllow {
							skip("permissions.task", r.String())
							continue
						}
						kept = append(kept, r)
					}
					if apply {
						layer.Permissions.Task = kept
					}
					continue
				}
				if list, ok := perms[pk].([]any); ok {
					for _, r := range list {
						skip("permissions."+pk, r)
					}
				} else {
					skip("permissions."+pk, perms[pk])
				}
				if apply {
					delete(perms, pk)
				}
			}
			continue
		case key == "maxTurns":
			if n := layer.MaxTurns; n > 0 && (merged.MaxTurns == 0 || n <= merged.MaxTurns) {
				continue
			}
			skip(key, val)
		case key == "limits":
			lm, ok := val.(map[string]any)
			if !ok {
				continue
			}
			for _, lk := range slices.Sorted(mapKeys(lm)) {
				if lowerLimit(lk, layer.Limits, merged.Limits) {
					continue
				}
				skip("limits."+lk, lm[lk])
				if apply {
					delete(lm, lk)
				}
			}
			continue
		case key == "subagents":
			sm, ok := val.(map[string]any)
			if !ok {
				continue
			}
			for _, sk := range slices.Sorted(mapKeys(sm)) {
				if sm[sk] == nil || lowerSubagents(sk, layer.Subagents, merged.Subagents) {
					continue
				}
				skip("subagents."+sk, sm[sk])
				if apply {
					delete(sm, sk)
				}
			}
			continue
		case slices.Contains(narrowKeys, key):
			continue
		case key == "hooks" || key == "env" || key == "providers" || key == "aliases" || key == "pricing" || key == "mcpServers":
			// One item per entry: the list shows each command, each
			// variable, each provider override.
			if m, ok := val.(map[string]any); ok {
				for _, k := range slices.Sorted(mapKeys(m)) {
					skip(key+"."+k, m[k])
				}
			} else {
				skip(key, val)
			}
		default:
			skip(key, val)
		}
		if apply {
			delete(generic, key)
		}
	}
	if apply {
		layer.Hooks, layer.MCPServers = nil, nil
	}
	return out
}

// lowerLimit reports whether the project's limits.key is set, and no
// higher than the one the layers below (or the default) give.
func lowerLimit(key string, mine, below Limits) bool {
	or := func(v, def float64) float64 {
		if v > 0 {
			return v
		}
		return def
	}
	switch key {
	case "streamFirstByteSeconds":
		return mine.StreamFirstByteSeconds > 0 && mine.StreamFirstByteSeconds <= or(below.StreamFirstByteSeconds, guard.DefaultFirstByte.Seconds())
	case "streamIdleSeconds":
		return mine.StreamIdleSeconds > 0 && mine.StreamIdleSeconds <= or(below.StreamIdleSeconds, guard.DefaultIdle.Seconds())
	case "maxReplyBytes":
		return mine.MaxReplyBytes > 0 && float64(mine.MaxReplyBytes) <= or(float64(below.MaxReplyBytes), float64(guard.DefaultMaxReplyBytes))
	case "maxToolInputBytes":
		return mine.MaxToolInputBytes > 0 && float64(mine.MaxToolInputBytes) <= or(float64(below.MaxToolInputBytes), float64(loop.DefaultMaxToolInputBytes))
	}
	return false
}

// lowerSubagents reports whether the project's subagents.key is a bound
// no looser than the layers below give (or the default): fan-out and
// time limits a project may tighten.
func lowerSubagents(key string, mine, below Subagents) bool {
	// lower: v is set and no looser than b, where 0 in b means def (or
	// no limit when def is 0).
	lower := func(v, b, def int) bool {
		if b == 0 {
			b = def
		}
		return v > 0 && (b == 0 || v <= b)
	}
	switch key {
	case "maxSpawnDepth":
		return lower(mine.MaxSpawnDepth, below.MaxSpawnDepth, 1)
	case "maxChildrenPerAgent":
		return lower(mine.MaxChildrenPerAgent, below.MaxChildrenPerAgent, 0)
	case "maxForegroundConcurrent":
		return lower(mine.MaxForegroundConcurrent, below.MaxForegroundConcurrent, below.ForegroundLimit())
	case "maxConcurrent":
		return lower(mine.MaxConcurrent, below.MaxConcurrent, below.Lane())
	case "runTimeoutSeconds":
		return lower(mine.RunTimeoutSeconds, below.RunTimeoutSeconds, 0)
	case "model", "surface", "fork", "teams", "coordinator", "announce", "cleanup", "archiveAfterMinutes":
		return true // choices of how, not grants of what
	}
	return false
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// mcpjsonAsks lists the servers of the project's .mcp.json: each is a
// command the repository would have cadre run.
func mcpjsonAsks(cwd string) []trust.Item {
	path := filepath.Join(cwd, ".mcp.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if json.Unmarshal(data, &doc) != nil {
		// Unreadable is still something it asks for: its bytes are what
		// trust pins.
		return []trust.Item{{Source: path, Key: "mcpServers", Value: string(data)}}
	}
	var out []trust.Item
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range doc.MCPServers {
			if !yield(k) {
				return
			}
		}
	}) {
		var v any
		_ = json.Unmarshal(doc.MCPServers[name], &v)
		out = append(out, trust.Item{Source: path, Key: "mcpServers." + name, Value: trust.Value(v)})
	}
	return out
}

// personalLocal reports whether a settings.local.json at path is the
// user's own: a regular file (not a link) inside the project that git
// does not track. A committed one is the repository's, whatever its
// name says. When git cannot tell, it is the project's: the safe side.
func personalLocal(cwd, path string) (bool, string) {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, ""
	}
	if err != nil {
		return false, fmt.Sprintf("cannot be read (%v)", err)
	}
	if !st.Mode().IsRegular() {
		return false, "is not a regular file (a link or other)"
	}
	// Its directory may be a link too (.cadre -> elsewhere).
	real, err1 := filepath.EvalSymlinks(path)
	root, err2 := filepath.EvalSymlinks(cwd)
	if err1 != nil || err2 != nil {
		return false, "cannot be resolved"
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return false, "resolves to " + real + ", outside the project"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tracked, err := worktree.Tracked(ctx, cwd, path)
	if err != nil {
		return false, fmt.Sprintf("could not be checked with git (%v)", err)
	}
	if tracked {
		return false, "is tracked by git"
	}
	return true, ""
}
