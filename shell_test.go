//go:build unix

package cadre_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/proctest"
	"github.com/cadre-dev/cadre/llm"
)

// A background command dies with the runtime that runs it: Close stops the
// trees of the conversations still open, and with them their commands'
// process groups.
func TestRuntimeCloseKillsBackgroundShells(t *testing.T) {
	f := newFixture(t)
	f.fn = func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		for _, b := range last.Content {
			if b.Type == llm.BlockToolResult {
				return llm.Reply(llm.Text("started: " + b.ResultText())), nil
			}
		}
		return llm.Reply(llm.ToolUse("t1", "Bash", json.RawMessage(`{"command":"echo $$ > pgid.txt; sleep 60 & sleep 60","run_in_background":true}`))), nil
	}
	rt, err := cadre.New(context.Background(), cadre.Options{
		Cwd: f.dir, LLM: &llm.ModelFunc{ID: "test:model", Func: f.fn}, Getenv: testkit.Home(f.home),
	})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			rt.Close()
		}
	})
	cv := openConvo(t, rt, cadre.OpenRequest{PermissionMode: cadre.PermissionBypass})
	cv.send("start it")
	if r := cv.waitResults(1)[0]; !strings.Contains(r.Result, "running in the background") {
		t.Fatalf("result = %q", r.Result)
	}
	// The command writes its group id first thing; the call returned
	// before it had to.
	var pgid int
	deadline := time.Now().Add(deadline)
	for {
		b, err := os.ReadFile(filepath.Join(f.dir, "pgid.txt"))
		if n, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			pgid = n
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background command never wrote its process group")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !proctest.GroupAlive(pgid) {
		t.Fatal("the background command is not running")
	}
	closed = true
	if err := rt.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	proctest.WaitGroupGone(t, pgid, 10*time.Second)
}
