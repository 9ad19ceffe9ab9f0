package config

import (
	"strings"
	"testing"
	"time"
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

// TestStoreTimes: store.heartbeatSeconds and store.orphanAfterSeconds
// default to 30 and 600; a value given must be a positive whole number of
// seconds, and the orphan timeout at least twice the heartbeat (checked
// across layers), each error naming the setting.
func TestStoreTimes(t *testing.T) {
	for _, tc := range []struct {
		name, user, local   string
		heartbeat, orphaned time.Duration
		err                 string
	}{
		{"defaults", "", "", 30 * time.Second, 600 * time.Second, ""},
		{"set", `{"store": {"heartbeatSeconds": 1, "orphanAfterSeconds": 5}}`, "", time.Second, 5 * time.Second, ""},
		{"across layers", `{"store": {"heartbeatSeconds": 2}}`, `{"store": {"orphanAfterSeconds": 4}}`, 2 * time.Second, 4 * time.Second, ""},
		{"zero heartbeat", `{"store": {"heartbeatSeconds": 0}}`, "", 0, 0, "store.heartbeatSeconds: want a positive number of seconds, got 0"},
		{"negative orphan", `{"store": {"orphanAfterSeconds": -5}}`, "", 0, 0, "store.orphanAfterSeconds: want a positive number of seconds, got -5"},
		{"fraction", `{"store": {"heartbeatSeconds": 1.5}}`, "", 0, 0, "store.heartbeatSeconds"},
		{"text", `{"store": {"orphanAfterSeconds": "10m"}}`, "", 0, 0, "store.orphanAfterSeconds"},
		{"orphan too short", `{"store": {"heartbeatSeconds": 10}}`, `{"store": {"orphanAfterSeconds": 15}}`, 0, 0,
			"store.orphanAfterSeconds: want at least twice store.heartbeatSeconds (10 s), got 15 s"},
		{"default orphan too short", `{"store": {"heartbeatSeconds": 400}}`, "", 0, 0, "store.orphanAfterSeconds: want at least twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.writeLayers(t, tc.user, "", tc.local)
			l, err := e.load(Overrides{})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to say %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := l.Settings.Store.Heartbeat(); got != tc.heartbeat {
				t.Errorf("heartbeat %s, want %s", got, tc.heartbeat)
			}
			if got := l.Settings.Store.OrphanAfter(); got != tc.orphaned {
				t.Errorf("orphan timeout %s, want %s", got, tc.orphaned)
			}
		})
	}
}

// TestStoreDispatch: store.dispatch takes sticky or any; anything else is
// refused at load, naming the file and the key.
func TestStoreDispatch(t *testing.T) {
	for _, tc := range []struct {
		text, want, err string
	}{
		{`{}`, "", ""},
		{`{"store": {"dispatch": "any"}}`, "any", ""},
		{`{"store": {"dispatch": "sticky"}}`, "sticky", ""},
		{`{"store": {"dispatch": "everywhere"}}`, "", `store.dispatch: want "sticky" or "any", got "everywhere"`},
	} {
		e := newEnv(t)
		e.write(t, ScopeUser, tc.text)
		l, err := e.load(Overrides{})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "settings.json") {
				t.Errorf("%s: err = %v, want one naming the file and %q", tc.text, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.text, err)
		case l.Settings.Store.Dispatch != tc.want:
			t.Errorf("%s: dispatch = %q, want %q", tc.text, l.Settings.Store.Dispatch, tc.want)
		}
	}
}
