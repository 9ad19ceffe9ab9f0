package cadre

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/internal/store/sqlite"
	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/llm"
)

// childWrites runs a main agent that starts one subagent with input and,
// once the child's result or notification is back, answers; it returns the
// store's commits and writes between the main agent's first model call
// (its own session recorded) and the call that carries the child's end,
// i.e. what the child cost the store, and the files the child left in the
// state directory.
func childWrites(t *testing.T, input string) (commits, writes int64, files []string) {
	t.Helper()
	home, dir := t.TempDir(), t.TempDir()
	var (
		rt         *Runtime
		mu         sync.Mutex
		start, end [2]int64
	)
	stats := func() [2]int64 {
		st := rt.app.DB.(*sqlite.DB).Stats()
		return [2]int64{st.Commits, st.Writes}
	}
	model := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent != "main" {
			return llm.Reply(llm.Text("child done")), nil
		}
		mu.Lock()
		defer mu.Unlock()
		last := req.Messages[len(req.Messages)-1]
		switch {
		case len(req.Messages) == 1:
			start = stats()
			return llm.Reply(llm.ToolUse("toolu_1", "Agent", json.RawMessage(input))), nil
		case strings.Contains(last.Text(), "<task-notification>") || (!strings.Contains(input, "run_in_background") && len(req.Messages) == 3):
			end = stats()
			return llm.Reply(llm.Text("all done")), nil
		}
		return llm.Reply(llm.Text("waiting")), nil
	}
	rt = funcRuntime(t, home, dir, model)
	runToEnd(t, rt, "delegate")
	mu.Lock()
	defer mu.Unlock()
	if end == [2]int64{} {
		t.Fatal("the main agent never saw the child's end")
	}
	// Everything in the state directory but the store's own files and
	// the main session's transcript.
	err := filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(home, path)
		if !strings.HasPrefix(filepath.Base(rel), "cadre.db") && !strings.HasPrefix(rel, "run"+string(filepath.Separator)) {
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	for i, f := range files {
		files[i] = filepath.Join(home, f)
	}
	return end[0] - start[0], end[1] - start[1], files
}

// funcRuntime is a runtime in the workspace dir with its state in home,
// whose model is model; it is closed when t ends.
func funcRuntime(t *testing.T, home, dir string, model func(context.Context, *llm.Request) (*llm.Response, error)) *Runtime {
	t.Helper()
	rt, err := New(context.Background(), Options{Cwd: dir, LLM: &llm.ModelFunc{ID: "test:model", Func: model}, Getenv: testkit.Home(home)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt
}

// runToEnd runs prompt on rt and reads its events to the end.
func runToEnd(t *testing.T, rt *Runtime, prompt string) {
	t.Helper()
	for _, err := range rt.Run(t.Context(), Request{Prompt: prompt}) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// distinct keeps one name of each file in paths.
func distinct(t *testing.T, paths []string) []os.FileInfo {
	t.Helper()
	var out []os.FileInfo
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(out, func(o os.FileInfo) bool { return os.SameFile(o, fi) }) {
			out = append(out, fi)
		}
	}
	return out
}

// TestChildStoreWrites: a child's records cost the store at most two
// transactions, one when it starts and one when it ends, and it leaves one
// file. A background
// child's session and task records are written together (S-L5 start,
// S-L6 end); before, they were five writes: the session row, the task
// record, running, the session's end, the task's end.
func TestChildStoreWrites(t *testing.T) {
	for _, tc := range []struct {
		name, input string
	}{
		{"background", `{"description":"bg","prompt":"work","run_in_background":true}`},
		{"foreground", `{"description":"fg","prompt":"work"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			commits, writes, files := childWrites(t, tc.input)
			if commits > 2 || writes > 2 {
				t.Errorf("a %s child made %d writes in %d commits, want at most 2 of each", tc.name, writes, commits)
			}
			// The main session's transcript and one file of the
			// child's: its transcript, which for a background child
			// is also its output file (a second name of it).
			if n := len(distinct(t, files)); n != 2 {
				t.Errorf("a %s child left %d files, want 1 beside the main transcript: %v", tc.name, n-1, files)
			}
			if bg := slices.ContainsFunc(files, func(f string) bool { return filepath.Base(filepath.Dir(f)) == "tasks" }); bg != (tc.name == "background") {
				t.Errorf("names of a %s child's files: %v", tc.name, files)
			}
		})
	}
}

// A result lists each subagent's figures as its session record has them.
// A run whose end this process wrote carries that record as written,
// instead of reading it back: a background child's, written with its task
// in one transaction, and a foreground child's, written by its session.
func TestResultCostsAreTheRecordsOfRunsEndedHere(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	model := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent != "main" {
			r := llm.Reply(llm.Text("child done"))
			r.Usage = llm.Usage{InputTokens: 11, OutputTokens: 7}
			return r, nil
		}
		last := req.Messages[len(req.Messages)-1]
		switch {
		case len(req.Messages) == 1:
			return llm.Reply(
				llm.ToolUse("toolu_bg", "Agent", json.RawMessage(`{"description":"in the background","prompt":"go","run_in_background":true}`)),
				llm.ToolUse("toolu_fg", "Agent", json.RawMessage(`{"description":"in the foreground","prompt":"go"}`)),
			), nil
		case strings.Contains(last.Text(), "<task-notification>"):
			return llm.Reply(llm.Text("all done")), nil
		}
		return llm.Reply(llm.Text("waiting")), nil
	}
	rt := funcRuntime(t, home, dir, model)
	listed := map[string]SubagentCost{}
	for ev, err := range rt.Run(t.Context(), Request{Prompt: "delegate"}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Result != nil {
			for _, s := range ev.Result.Subagents {
				listed[s.AgentID] = s
			}
		}
	}
	if len(listed) != 2 {
		t.Fatalf("results listed %d subagents, want 2: %+v", len(listed), listed)
	}
	for id, s := range listed {
		info, err := rt.app.DB.GetSession(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if info.NumTurns != 1 || s.Turns != info.NumTurns || s.Usage != info.Usage || s.Model != info.Model || s.CostUSD != info.CostUSD {
			t.Errorf("%s (%s) listed %d turns, %+v, model %q, cost %v; its record: %d turns, %+v, model %q, cost %v",
				id, s.Description, s.Turns, s.Usage, s.Model, s.CostUSD, info.NumTurns, info.Usage, info.Model, info.CostUSD)
		}
	}
}
