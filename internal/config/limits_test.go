package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/provider/guard"
)

func TestLimits(t *testing.T) {
	e := newEnv(t)
	e.write(t, ScopeUser, `{"limits": {"streamFirstByteSeconds": 600, "streamIdleSeconds": 90, "maxReplyBytes": 1000}}`)
	e.write(t, ScopeProject, `{"limits": {"streamIdleSeconds": 0.5, "maxToolInputBytes": 2048}}`)
	got := e.mustLoad(t, Overrides{}).Settings.Limits
	want := Limits{StreamFirstByteSeconds: 600, StreamIdleSeconds: 0.5, MaxReplyBytes: 1000, MaxToolInputBytes: 2048}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged limits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(guard.Limits{FirstByte: 10 * time.Minute, Idle: 500 * time.Millisecond, MaxReplyBytes: 1000}, got.Stream()); diff != "" {
		t.Errorf("stream limits (-want +got):\n%s", diff)
	}
	// Unset, every limit is the default.
	if diff := cmp.Diff(guard.Limits{}.WithDefaults(), Limits{}.Stream().WithDefaults()); diff != "" {
		t.Errorf("default stream limits (-want +got):\n%s", diff)
	}
}

func TestInvalidLimits(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`{"limits": {"streamFirstByteSeconds": -1}}`, "limits.streamFirstByteSeconds: want 0 (the default, 300) or more seconds, up to 86400, got -1"},
		{`{"limits": {"streamIdleSeconds": 100000}}`, "limits.streamIdleSeconds: want 0 (the default, 180) or more seconds, up to 86400, got 100000"},
		{`{"limits": {"maxReplyBytes": -5}}`, "limits.maxReplyBytes: want 0 (the default, 8388608) or more bytes, got -5"},
		{`{"limits": {"maxToolInputBytes": -1}}`, "limits.maxToolInputBytes: want 0 (the default, 1048576) or more bytes, got -1"},
		{`{"limits": {"maxReplyBytes": 1.5}}`, "limits.maxReplyBytes: want a whole number"},
		{`{"limits": {"streamIdleSeconds": "3m"}}`, "limits.streamIdleSeconds: want a number, got string"},
	} {
		e := newEnv(t)
		e.write(t, ScopeProject, tc.body)
		_, err := e.load(Overrides{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.body, err, tc.want)
		}
	}
}
