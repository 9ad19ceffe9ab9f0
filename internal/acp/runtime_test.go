package acp

import (
	"context"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
)

// session/load takes a session id from the editor: one that is not an id
// (a path that climbs out of the state dir) or names no session is
// refused before anything is read.
func TestHistoryRefusesBadSessionIDs(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"CADRE_HOME": home, "ANTHROPIC_API_KEY": "unused"}
	rts := NewRuntimes(cadre.Options{Model: "claude-sonnet-5-5", Getenv: func(k string) string { return env[k] }})
	defer rts.Close()
	cwd := t.TempDir()
	for _, id := range []string{"../../../etc/passwd", "0199a0b4-0000-7000-8000-000000000000", ""} {
		if _, err := rts.History(context.Background(), cwd, "", id); err == nil {
			t.Errorf("History(%q) succeeded", id)
		}
	}
	if _, err := rts.Open(context.Background(), OpenRequest{Cwd: cwd, Resume: "../x"}); err == nil || !strings.Contains(err.Error(), "../x") {
		t.Errorf("Open resuming ../x gave %v", err)
	}
}
