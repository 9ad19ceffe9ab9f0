//go:build unix

package cadre_test

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/sqlite"
	"github.com/cadre-dev/cadre/llm"
)

// TestStartupWorkIsOffTheFirstRequestsPath holds the start-up work (the
// worktree report, whose git is gated here, then crash recovery and the
// archive sweep) and checks that a new session runs to its end meanwhile,
// that what must see recovered state waits for it, and that Close waits for
// the work to end.
func TestStartupWorkIsOffTheFirstRequestsPath(t *testing.T) {
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	f := newFixture(t)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		return llm.Reply(llm.Text("done")), nil
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "first"}} {
		if out, err := exec.Command(realGit, append([]string{"-C", f.dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// cadre made worktrees here once, so the report runs git.
	if err := os.Mkdir(filepath.Join(f.dir, ".git", "cadre-worktrees"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A run that crashed left its session running.
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(f.home, "cadre.db"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	crashed := session.Info{ID: "crashed", Agent: "main", Cwd: f.dir, Status: session.StatusRunning, Owner: "999999-gone", Created: now, Updated: now}
	if err := errors.Join(db.CreateSession(ctx, crashed), db.Close()); err != nil {
		t.Fatal(err)
	}

	// The first git waits until the test opens the gate for writing.
	bin := t.TempDir()
	gate := filepath.Join(bin, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nif [ ! -e " + gate + ".open ]; then cat " + gate + " >/dev/null; : > " + gate + ".open; fi\nexec " + realGit + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	opened := false
	open := func() {
		if opened {
			return
		}
		opened = true
		w, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
	}

	done := make(chan *cadre.Runtime)
	go func() {
		rt := f.open(t, cadre.Options{})
		done <- rt
	}()
	var rt *cadre.Runtime
	select {
	case rt = <-done:
	case <-time.After(20 * time.Second):
		open()
		t.Fatal("New waited for the worktree report's git")
	}
	t.Cleanup(open) // before rt.Close, which waits for the work

	evs := collect(t, rt, cadre.Request{Prompt: "hi"})
	if last := evs[len(evs)-1]; last.Type != cadre.EventResult || last.Result.IsError {
		t.Fatalf("the new session's run ended with %+v", last)
	}

	// Listing sessions must show recovered state, so it waits.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if infos, err := rt.Sessions(short, "", 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sessions did not wait for recovery: %+v, %v", infos, err)
	}

	open()
	infos, err := rt.Sessions(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if want := map[bool]cadre.SessionStatus{true: cadre.SessionFailed, false: cadre.SessionCompleted}[in.ID == "crashed"]; in.Status != want {
			t.Errorf("session %s is %s, want %s", in.ID, in.Status, want)
		}
	}
	if len(infos) != 2 {
		t.Errorf("%d sessions, want the crashed one and the new one: %+v", len(infos), infos)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStartupRecoveryErrorsAreLogged: recovery runs beside the first run,
// so its failure no longer stops New; it must still reach someone. A run
// left "running" by a dead process whose record cannot be rewritten (its
// kind is unknown: written by a newer or broken cadre) makes recovery fail;
// the warning names the task, and a new session still runs.
func TestStartupRecoveryErrorsAreLogged(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	path := filepath.Join(f.home, "cadre.db")
	db, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw.ExecContext(ctx, `INSERT INTO tasks (id, kind, status, owner) VALUES ('broken-task', 'bogus', 'running', '999999-gone')`)
	if err := errors.Join(err, raw.Close()); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	rt := f.open(t, cadre.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	collect(t, rt, cadre.Request{Prompt: "what is the secret word?"})
	if err := rt.Close(); err == nil || !strings.Contains(err.Error(), "broken-task") {
		t.Errorf("Close = %v, want the recovery error", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "broken-task") {
		t.Errorf("the recovery error was not logged:\n%s", logs.String())
	}
}
