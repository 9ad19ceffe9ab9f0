package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testConfig is a Config on a fresh workspace and state dir, reading no
// environment but CADRE_HOME.
func testConfig(t *testing.T) (Config, string) {
	t.Helper()
	home, cwd := t.TempDir(), t.TempDir()
	env := map[string]string{"CADRE_HOME": home}
	return Config{
		Cwd: cwd, Getenv: func(k string) string { return env[k] }, Now: time.Now, Logger: discard(),
		Trusted: true, Version: "test",
	}, home
}

func TestNewAndCloseReleaseEverything(t *testing.T) {
	c, home := testConfig(t)
	a, err := New(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Settled(t.Context()); err != nil {
		t.Fatalf("start-up work: %v", err)
	}
	owner := a.Owner.ID()
	runDir := filepath.Join(home, "run")
	if !task.Alive(runDir, owner) {
		t.Fatalf("owner %s holds no lock while the app is open", owner)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if task.Alive(runDir, owner) {
		t.Errorf("owner %s still holds its lock after Close", owner)
	}
	if err := a.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// A failure after the store, the owner lock and the scratch directory are
// built undoes them: the lock is free and the scratch directory is gone.
func TestNewFailingPartWayUndoesWhatItBuilt(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	c, _ := testConfig(t)
	c.Ephemeral = true
	c.Tools = []tool.Tool{nil} // refused after the store is open
	_, err := New(t.Context(), c)
	if err == nil || !strings.Contains(err.Error(), "Options.Tools[0] is nil") {
		t.Fatalf("New = %v, want the nil tool refused", err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "cadre-ephemeral-*"))
	if len(left) > 0 {
		t.Errorf("the scratch state outlived the failed New: %v", left)
	}
	locks, _ := filepath.Glob(filepath.Join(tmp, "cadre-ephemeral-*", "run", "*"))
	if len(locks) > 0 {
		t.Errorf("owner locks outlived the failed New: %v", locks)
	}
}

func TestNewFailsOnBadSettingsBeforeBuildingAnything(t *testing.T) {
	c, home := testConfig(t)
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"store": {"dispatch": "everywhere"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := New(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "store.dispatch") {
		t.Fatalf("New = %v, want the bad store.dispatch named", err)
	}
	if _, err := os.Stat(filepath.Join(home, "cadre.db")); !os.IsNotExist(err) {
		t.Errorf("a store was created for a runtime that failed its settings (stat: %v)", err)
	}
}
