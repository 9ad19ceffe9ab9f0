package config

import (
	"slices"

	"github.com/cadre-dev/cadre/internal/excerpt"
)

// Sandbox modes (sandbox.mode).
const (
	// SandboxAuto sandboxes where the machine can, and says once where it
	// cannot (the default).
	SandboxAuto = "auto"
	// SandboxRequired refuses to run a command the sandbox cannot hold.
	SandboxRequired = "required"
	// SandboxOff runs commands as they are.
	SandboxOff = "off"
)

// Sandbox is the "sandbox" block: Claude Code's keys where it has them
// (enabled, autoAllowBashIfSandboxed, excludedCommands, network), and
// cadre's mode. Only the user's own layers may switch it off or widen it:
// Load keeps, of a project's shared settings, only what narrows.
type Sandbox struct {
	// Enabled is Claude Code's switch: false is mode "off", true is "auto"
	// unless the same layer sets a mode. Folded into Mode per layer.
	Enabled bool `json:"enabled"`
	// Mode is auto (the default, ""), required or off.
	Mode string `json:"mode"`
	// AutoAllowBashIfSandboxed: a Bash command that will run sandboxed
	// needs no approval in the default mode unless a deny or ask rule
	// names it.
	AutoAllowBashIfSandboxed bool `json:"autoAllowBashIfSandboxed"`
	// ExcludedCommands are Bash rule specifiers ("docker:*") of commands
	// that run outside the sandbox (and so are never auto-allowed).
	ExcludedCommands []string `json:"excludedCommands"`
	// Network says what sandboxed commands may do on the network.
	Network SandboxNetwork `json:"network"`
	// Hooks puts the user's hook commands inside the sandbox too.
	Hooks bool `json:"hooks"`
	// AllowWrite are more directories sandboxed commands may write (a
	// build cache); "~/" starts at the home directory.
	AllowWrite []string `json:"allowWrite"`
	// DenyRead are more files and directories hidden from sandboxed
	// commands, besides the defaults (~/.ssh, ~/.aws, …).
	DenyRead []string `json:"denyRead"`
}

// SandboxNetwork is sandbox.network.
type SandboxNetwork struct {
	// Mode is "allow" (the default, "") or "deny": no TCP connect or bind.
	Mode string `json:"mode"`
}

func (s *Sandbox) validate(generic map[string]any, bad func(key, format string, args ...any) error) error {
	block, _ := generic["sandbox"].(map[string]any)
	if block == nil {
		return nil
	}
	switch s.Mode {
	case "", SandboxAuto, SandboxRequired, SandboxOff:
	default:
		return bad("sandbox.mode", "want %q, %q or %q, got %s", SandboxAuto, SandboxRequired, SandboxOff, excerpt.Quote(s.Mode))
	}
	if _, set := block["enabled"]; set && block["mode"] == nil {
		// Folded here, per layer, so that a later layer's enabled wins
		// over an earlier layer's mode.
		s.Mode = SandboxAuto
		if !s.Enabled {
			s.Mode = SandboxOff
		}
		block["mode"] = s.Mode
	}
	switch s.Network.Mode {
	case "", "allow", "deny":
	default:
		return bad("sandbox.network.mode", "want \"allow\" or \"deny\", got %s", excerpt.Quote(s.Network.Mode))
	}
	return nil
}

// dropProjectSandbox keeps, of a project's shared sandbox block, only what
// narrows: a cloned repository may turn the sandbox on, require it, deny
// the network, hide more paths or put hooks inside, but never switch it
// off, exclude commands, add writable directories or let commands run
// unasked.
func dropProjectSandbox(path string, layer *Settings, generic map[string]any) []Warning {
	block, ok := generic["sandbox"].(map[string]any)
	if !ok {
		return nil
	}
	var out []Warning
	drop := func(key string) {
		out = append(out, Warning{File: path, Key: "sandbox." + key,
			Message: "ignored in a project's shared settings: only your own settings (user, .cadre/settings.local.json, --settings) may switch the sandbox off or widen it"})
	}
	s := &layer.Sandbox
	keys := make([]string, 0, len(block))
	for k := range block {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		switch key {
		case "enabled":
			delete(block, key) // folded into mode by validate
		case "mode":
			if s.Mode == SandboxOff {
				delete(block, key)
				s.Mode = ""
				drop(key)
			}
		case "hooks":
			if !s.Hooks {
				delete(block, key)
				drop(key)
			}
		case "network":
			if s.Network.Mode != "deny" {
				delete(block, key)
				s.Network = SandboxNetwork{}
				drop(key + ".mode")
			}
		case "denyRead":
		default:
			delete(block, key)
			drop(key)
		}
	}
	s.AutoAllowBashIfSandboxed, s.ExcludedCommands, s.AllowWrite = false, nil, nil
	return out
}
