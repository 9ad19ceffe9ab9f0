package config

import (
	"testing"
)

// TestStoreURL: store.url is read from the user's and the local settings,
// a later layer winning; the project's shared settings cannot set it (a
// cloned repository must not choose where the user's records go), and say
// so in a warning.
func TestStoreURL(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		user, project, local string
		want                 string
		warned               bool
	}{
		{"unset", "", "", "", "", false},
		{"user", `{"store": {"url": "postgres://u@db/cadre"}}`, "", "", "postgres://u@db/cadre", false},
		{"local wins", `{"store": {"url": "postgres://u@db/a"}}`, "", `{"store": {"url": "postgres://u@db/b"}}`, "postgres://u@db/b", false},
		{"project ignored", `{"store": {"url": "postgres://u@db/mine"}}`, `{"store": {"url": "postgres://evil@x/steal"}}`, "", "postgres://u@db/mine", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			for scope, text := range map[string]string{ScopeUser: tc.user, ScopeProject: tc.project, ScopeLocal: tc.local} {
				if text != "" {
					e.write(t, scope, text)
				}
			}
			l := e.mustLoad(t, Overrides{})
			if l.Settings.Store.URL != tc.want {
				t.Errorf("store.url = %q, want %q", l.Settings.Store.URL, tc.want)
			}
			warned := len(l.Warnings) == 1 && l.Warnings[0].Key == "store"
			if warned != tc.warned || (!tc.warned && len(l.Warnings) > 0) {
				t.Errorf("warnings %v, want a store warning: %v", l.Warnings, tc.warned)
			}
		})
	}
}
