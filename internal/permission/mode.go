package permission

import (
	"fmt"
	"strings"
)

// Mode is a session's permission mode, least to most permissive: plan,
// default, acceptEdits, bypassPermissions.
type Mode string

const (
	// ModePlan allows read tools only.
	ModePlan Mode = "plan"
	// ModeDefault allows reads inside the workspace and asks for the rest.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also allows edits inside the workspace.
	ModeAcceptEdits Mode = "acceptEdits"
	// ModeBypass allows everything no deny rule forbids.
	ModeBypass Mode = "bypassPermissions"
)

// Modes lists the valid modes, least permissive first.
func Modes() []Mode { return []Mode{ModePlan, ModeDefault, ModeAcceptEdits, ModeBypass} }

// ParseMode returns the mode named s. Case is ignored, so "acceptedits"
// is acceptEdits; the returned Mode is always spelled canonically.
func ParseMode(s string) (Mode, error) {
	t := strings.TrimSpace(s)
	for _, m := range Modes() {
		if strings.EqualFold(t, string(m)) {
			return m, nil
		}
	}
	names := make([]string, 0, 4)
	for _, m := range Modes() {
		names = append(names, string(m))
	}
	if t == "" {
		return "", fmt.Errorf("empty permission mode: want one of %s", strings.Join(names, ", "))
	}
	return "", fmt.Errorf("unknown permission mode %q: want one of %s", s, strings.Join(names, ", "))
}
