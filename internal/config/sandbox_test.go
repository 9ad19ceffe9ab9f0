package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Only the user's own layers may switch the sandbox off or widen it; a
// project's shared settings may narrow it.
func TestSandboxLayers(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		user, project, local string
		want                 Sandbox
		warned               []string
	}{
		{name: "default", want: Sandbox{}},
		{name: "user off", user: `{"sandbox":{"enabled":false}}`, want: Sandbox{Mode: SandboxOff}},
		{name: "user widens", user: `{"sandbox":{"autoAllowBashIfSandboxed":true,"excludedCommands":["docker:*"],"allowWrite":["~/.cache"],"network":{"mode":"allow"}}}`,
			want: Sandbox{AutoAllowBashIfSandboxed: true, ExcludedCommands: []string{"docker:*"}, AllowWrite: []string{"~/.cache"}, Network: SandboxNetwork{Mode: "allow"}}},
		{name: "local off", local: `{"sandbox":{"mode":"off"}}`, want: Sandbox{Mode: SandboxOff}},
		{name: "project cannot switch off", project: `{"sandbox":{"enabled":false}}`, want: Sandbox{}, warned: []string{"sandbox.mode"}},
		{name: "project cannot undo the user", user: `{"sandbox":{"mode":"required"}}`, project: `{"sandbox":{"mode":"off"}}`,
			want: Sandbox{Mode: SandboxRequired}, warned: []string{"sandbox.mode"}},
		{name: "project cannot widen",
			project: `{"sandbox":{"autoAllowBashIfSandboxed":true,"excludedCommands":["rm:*"],"allowWrite":["/"],"network":{"mode":"allow"}}}`,
			want:    Sandbox{}, warned: []string{"sandbox.allowWrite", "sandbox.autoAllowBashIfSandboxed", "sandbox.excludedCommands", "sandbox.network.mode"}},
		{name: "project cannot undo a user's deny", user: `{"sandbox":{"network":{"mode":"deny"}}}`, project: `{"sandbox":{"network":{"mode":"allow"}}}`,
			want: Sandbox{Network: SandboxNetwork{Mode: "deny"}}, warned: []string{"sandbox.network.mode"}},
		{name: "project narrows", user: `{"sandbox":{"enabled":false}}`,
			project: `{"sandbox":{"mode":"required","network":{"mode":"deny"},"hooks":true,"denyRead":["~/.kube"]}}`,
			want:    Sandbox{Mode: SandboxRequired, Network: SandboxNetwork{Mode: "deny"}, Hooks: true, DenyRead: []string{"~/.kube"}}},
		{name: "later enabled wins over earlier mode", user: `{"sandbox":{"mode":"required"}}`, local: `{"sandbox":{"enabled":false}}`,
			want: Sandbox{Mode: SandboxOff}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.writeLayers(t, tc.user, tc.project, tc.local)
			got := e.mustLoad(t, Overrides{})
			s := got.Settings.Sandbox
			s.Enabled = false // folded into Mode
			if diff := cmp.Diff(tc.want, s); diff != "" {
				t.Errorf("sandbox (-want +got):\n%s", diff)
			}
			var warned []string
			for _, w := range got.Warnings {
				if strings.HasPrefix(w.Key, "sandbox") {
					warned = append(warned, w.Key)
				}
			}
			if diff := cmp.Diff(tc.warned, warned); diff != "" {
				t.Errorf("warnings (-want +got):\n%s\n%v", diff, got.Warnings)
			}
		})
	}
}

func TestSandboxInvalid(t *testing.T) {
	for _, tc := range []struct{ content, key string }{
		{`{"sandbox":{"mode":"sometimes"}}`, "sandbox.mode"},
		{`{"sandbox":{"network":{"mode":"proxy"}}}`, "sandbox.network.mode"},
		{`{"sandbox":{"excludedCommands":"docker"}}`, "sandbox.excludedCommands"},
	} {
		e := newEnv(t)
		e.write(t, ScopeUser, tc.content)
		_, err := e.load(Overrides{})
		if err == nil || !strings.Contains(err.Error(), tc.key) {
			t.Errorf("%s: err = %v, want one naming %s", tc.content, err, tc.key)
		}
	}
}
