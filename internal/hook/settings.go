package hook

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// Settings is the "hooks" block of Claude Code's settings files and of an
// agent file's frontmatter, keyed by event name:
//
//	{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}
type Settings map[string][]SettingsMatcher

// SettingsMatcher is one matcher and its hooks.
type SettingsMatcher struct {
	Matcher string         `json:"matcher"`
	Hooks   []SettingsHook `json:"hooks"`
}

// SettingsHook is one hook. Only "command" hooks run in cadre.
type SettingsHook struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	// Timeout is in seconds; 0 means DefaultTimeout.
	Timeout float64 `json:"timeout"`
}

// ParseSettings reads a hooks block given as JSON (an agent file's
// frontmatter, converted).
func ParseSettings(raw json.RawMessage) (Settings, error) {
	var s Settings
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("hooks: want {Event: [{matcher, hooks: [{type, command, timeout}]}]}: %w", err)
	}
	return s, nil
}

// Config turns settings into the engine's configuration, with command
// handlers that run in shell. Hooks cadre cannot run (a type other than
// "command") are left out with a warning; an unknown event or a bad
// matcher is an error. where prefixes messages ("settings.json: hooks").
func (s Settings) Config(where string, shell string) (Config, []string, error) {
	c := Config{}
	var warnings []string
	for _, name := range slices.Sorted(maps.Keys(s)) {
		ms := s[name]
		ev := Event(name)
		if !Known(ev) {
			warnings = append(warnings, fmt.Sprintf("%s.%s: cadre does not fire this event (it fires %s); its hooks never run", where, name, eventList()))
			continue
		}
		for i, m := range ms {
			if _, err := compile(m.Matcher); err != nil {
				return nil, warnings, fmt.Errorf("%s.%s[%d].matcher: %w", where, name, i, err)
			}
			cm := Matcher{Matcher: m.Matcher}
			for j, h := range m.Hooks {
				at := fmt.Sprintf("%s.%s[%d].hooks[%d]", where, name, i, j)
				switch {
				case h.Type != "command":
					warnings = append(warnings, fmt.Sprintf("%s: hooks of type %q do not run in cadre (only \"command\" hooks do)", at, h.Type))
					continue
				case h.Command == "":
					return nil, warnings, fmt.Errorf("%s.command: empty", at)
				case h.Timeout < 0 || math.IsInf(h.Timeout, 0) || math.IsNaN(h.Timeout):
					return nil, warnings, fmt.Errorf("%s.timeout: want a number of seconds above 0, got %v", at, h.Timeout)
				}
				cm.Handlers = append(cm.Handlers, Command(h.Command, time.Duration(h.Timeout*float64(time.Second)), shell))
			}
			if len(cm.Handlers) > 0 {
				c[ev] = append(c[ev], cm)
			}
		}
	}
	return c, warnings, nil
}
