package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// memSource is a recorded session tree held in memory.
type memSource struct {
	infos   []session.Info
	entries map[string][]session.Entry
}

func (s memSource) Session(_ context.Context, id string) (session.Info, error) {
	for _, i := range s.infos {
		if i.ID == id {
			return i, nil
		}
	}
	return session.Info{}, session.ErrNotFound
}

func (s memSource) Children(_ context.Context, id string) ([]session.Info, error) {
	var out []session.Info
	for _, i := range s.infos {
		if i.ParentID == id {
			out = append(out, i)
		}
	}
	return out, nil
}

func (s memSource) Transcript(_ context.Context, info session.Info) ([]session.Entry, error) {
	return s.entries[info.ID], nil
}

func user(blocks ...llm.Block) session.Entry {
	return session.Entry{Type: session.EntryUser, Message: &llm.Message{Role: llm.RoleUser, Content: blocks}}
}

func assistant(blocks ...llm.Block) session.Entry {
	return session.Entry{Type: session.EntryAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: blocks}, Model: "claude-x"}
}

// childSID is the reviewer's session id; the Agent result names it.
const childSID = "01a2244c-5538-7360-8f76-000000000001"

func result(id, text string) llm.Block { return llm.ToolResult(id, text, false) }

// tree is a main agent that starts a reviewer; the reviewer reads a file
// (the path under /work, the recorded workspace) and answers. Both number
// their calls from 1, as a test model might.
func tree() memSource {
	return memSource{
		infos: []session.Info{
			{ID: "main-1", Agent: "main", Cwd: "/work"},
			{ID: childSID, ParentID: "main-1", Agent: "reviewer", Cwd: "/work"},
		},
		entries: map[string][]session.Entry{
			"main-1": {
				user(llm.Text("Review it")),
				assistant(llm.Text("Asking."), llm.ToolUse("call-1", "Agent", json.RawMessage(`{"subagent_type":"reviewer","prompt":"Review a.go"}`))),
				user(result("call-1", "All good.\nagentId: "+childSID+"\nduration_ms: 1200")),
				assistant(llm.Text("Done.")),
			},
			childSID: {
				user(llm.Text("Review a.go")),
				assistant(llm.ToolUse("call-1", "Read", json.RawMessage(`{"file_path":"a.go"}`))),
				user(result("call-1", "/work/a.go: package a")),
				assistant(llm.Text("All good.")),
			},
		},
	}
}

func load(t *testing.T) *Recording {
	t.Helper()
	rec, err := Load(context.Background(), tree(), "main-1")
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// ask streams req and returns the reply, or the error.
func ask(m llm.Model, req *llm.Request) (llm.Message, error) {
	for ev, err := range m.Stream(context.Background(), req) {
		if err != nil {
			return llm.Message{}, err
		}
		if ev.Type == llm.EventDone {
			return ev.Response.Message, nil
		}
	}
	return llm.Message{}, errors.New("stream ended without a reply")
}

func TestLoadLinksChildrenAndRenamesSharedIDs(t *testing.T) {
	rec := load(t)
	if len(rec.All) != 2 || rec.Root.SessionID != "main-1" || rec.All[1].Agent != "reviewer" {
		t.Fatalf("recording %+v", rec.All)
	}
	child := rec.All[1]
	if child.Prompt != "Review a.go" || child.SpawnedBy != (Call{Turn: 1, ToolUseID: "call-1", Tool: "Agent"}) {
		t.Errorf("child prompt %q, spawned by %+v", child.Prompt, child.SpawnedBy)
	}
	mainID := rec.Root.Turns[0].Message.ToolUses()[0].ID
	childID := child.Turns[0].Message.ToolUses()[0].ID
	if mainID == childID || rec.Root.Turns[0].RecordedID(mainID) != "call-1" || child.Turns[0].RecordedID(childID) != "call-1" {
		t.Errorf("shared id call-1 became %q and %q", mainID, childID)
	}
	if r, ok := rec.Result(childID); !ok || r.ResultText() != "/work/a.go: package a" {
		t.Errorf("child's result under its new id: %v %v", r, ok)
	}
}

// replayed plays the loop: it asks for every turn of main, then of the
// child, answering the child's Read with readResult.
func replayed(t *testing.T, m *Model, readResult string) (mainEnd llm.Message, err error) {
	t.Helper()
	mainMsgs := []llm.Message{llm.UserText("Review it")}
	a1, err := ask(m, &llm.Request{Agent: "main", Messages: mainMsgs})
	if err != nil {
		return a1, err
	}
	childMsgs := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text("<context>"), llm.Text("Review a.go")}}}
	c1, err := ask(m, &llm.Request{Agent: "reviewer", Messages: childMsgs})
	if err != nil {
		return c1, err
	}
	read := c1.ToolUses()[0]
	childMsgs = append(childMsgs, c1, llm.Message{Role: llm.RoleUser, Content: []llm.Block{result(read.ID, readResult)}})
	c2, err := ask(m, &llm.Request{Agent: "reviewer", Messages: childMsgs})
	if err != nil {
		return c2, err
	}
	agent := a1.ToolUses()[0]
	mainMsgs = append(mainMsgs, a1, llm.Message{Role: llm.RoleUser, Content: []llm.Block{result(agent.ID, c2.Text()+"\nagentId: 01a2244c-5538-7360-8f76-81719118882a\nduration_ms: 7")}})
	return ask(m, &llm.Request{Agent: "main", Messages: mainMsgs})
}

func TestModelFeedsTheRecordingAndPassesAFaithfulReplay(t *testing.T) {
	stops := 0
	m := NewModel(Config{Recording: load(t), Normalizer: NewNormalizer("/scratch/w", "/work"), Stop: func() { stops++ }})
	end, err := replayed(t, m, "/scratch/w/a.go: package a")
	if err != nil {
		t.Fatal(err)
	}
	if end.Text() != "Done." {
		t.Errorf("main's last turn %q", end.Text())
	}
	if d, stopped := m.Divergences(); len(d) != 0 || stopped || stops != 0 {
		t.Errorf("divergences %v stopped %v", d, stopped)
	}
	if fed, live := m.Counts(); fed != 4 || live != 0 {
		t.Errorf("fed %d live %d, want 4 and 0", fed, live)
	}
	if u := m.Unstarted(); len(u) != 0 {
		t.Errorf("unstarted %v", u)
	}
}

func TestModelStopsAtTheFirstDivergence(t *testing.T) {
	stops := 0
	m := NewModel(Config{Recording: load(t), Normalizer: NewNormalizer("/scratch/w", "/work"), Stop: func() { stops++ }})
	_, err := replayed(t, m, "/scratch/w/a.go: package b")
	if err == nil || !strings.Contains(err.Error(), "replay diverged: tool_result: agent reviewer (01a2244c-5538-7360-8f76-000000000001), turn 1, tool Read (call call-1)") {
		t.Fatalf("error %v", err)
	}
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrBadRequest {
		t.Errorf("want a bad_request llm.Error (not retried), got %#v", err)
	}
	d, stopped := m.Divergences()
	if !stopped || stops != 1 || len(d) != 1 {
		t.Fatalf("divergences %v stopped %v stops %d", d, stopped, stops)
	}
	want := Divergence{Kind: KindToolResult, Agent: "reviewer", AgentID: childSID, Turn: 1, ToolUseID: "call-1", Tool: "Read",
		Recorded: "/work/a.go: package a", Replayed: "/work/a.go: package b", Detail: "the result differs",
		Diff: "@@ line 1 @@\n-/work/a.go: package a\n+/work/a.go: package b"}
	if d[0] != want {
		t.Errorf("divergence\n%+v\nwant\n%+v", d[0], want)
	}
	// Every later call fails at once.
	if _, err := ask(m, &llm.Request{Agent: "main", Messages: []llm.Message{llm.UserText("Review it")}}); err == nil {
		t.Error("a call after the stop was answered")
	}
}

func TestModelGoesLiveAfterADivergence(t *testing.T) {
	var liveReqs []string
	live := &llm.ModelFunc{ID: "live", Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		liveReqs = append(liveReqs, agentOf(req))
		return llm.Reply(llm.Text("LIVE")), nil
	}}
	m := NewModel(Config{Recording: load(t), Normalizer: NewNormalizer("/scratch/w", "/work"), Stop: func() { t.Error("stopped with a live model") }})
	m.SetLive(live)
	end, err := replayed(t, m, "changed")
	if err != nil {
		t.Fatal(err)
	}
	// The reviewer's turn 2 is live; its answer then makes main's Agent
	// result differ, so main's turn 2 is live too.
	if end.Text() != "LIVE" || strings.Join(liveReqs, ",") != "reviewer,main" {
		t.Errorf("end %q, live calls %v", end.Text(), liveReqs)
	}
	d, stopped := m.Divergences()
	if stopped || len(d) != 2 || d[0].Agent != "reviewer" || d[1].Agent != "main" || d[1].Tool != "Agent" {
		t.Errorf("divergences %+v", d)
	}
	if fed, n := m.Counts(); fed != 2 || n != 2 {
		t.Errorf("fed %d live %d", fed, n)
	}
}

func TestModelFromTurn(t *testing.T) {
	live := &llm.ModelFunc{Func: func(context.Context, *llm.Request) (*llm.Response, error) { return llm.Reply(llm.Text("LIVE")), nil }}
	m := NewModel(Config{Recording: load(t), Normalizer: NewNormalizer("/scratch/w", "/work"), FromTurn: 2})
	m.SetLive(live)
	end, err := replayed(t, m, "/scratch/w/a.go: package a")
	if err != nil || end.Text() != "LIVE" {
		t.Fatalf("end %q err %v", end.Text(), err)
	}
	if d, _ := m.Divergences(); len(d) != 0 {
		t.Errorf("divergences %v", d)
	}
	if fed, n := m.Counts(); fed != 3 || n != 1 {
		t.Errorf("fed %d live %d, want main's turn 1 and the reviewer's two fed, main's turn 2 live", fed, n)
	}
}

func TestModelReportsAnUnrecordedChild(t *testing.T) {
	m := NewModel(Config{Recording: load(t)})
	_, err := ask(m, &llm.Request{Agent: "reviewer", Messages: []llm.Message{llm.UserText("Review b.go")}})
	d, _ := m.Divergences()
	if err == nil || len(d) != 1 || d[0].Kind != KindChild || d[0].AgentID != childSID || d[0].Diff != "@@ line 1 @@\n-Review a.go\n+Review b.go" {
		t.Errorf("err %v divergences %+v", err, d)
	}
	m = NewModel(Config{Recording: load(t)})
	_, err = ask(m, &llm.Request{Agent: "tester", Messages: []llm.Message{llm.UserText("Test it")}})
	if d, _ := m.Divergences(); err == nil || len(d) != 1 || d[0].Kind != KindChild || d[0].AgentID != "" {
		t.Errorf("err %v divergences %+v", err, d)
	}
}

func TestModelAsksForATurnTheRecordingLacks(t *testing.T) {
	m := NewModel(Config{Recording: load(t)})
	msgs := []llm.Message{llm.UserText("Review a.go")}
	c1, _ := ask(m, &llm.Request{Agent: "reviewer", Messages: msgs})
	msgs = append(msgs, c1, llm.Message{Role: llm.RoleUser, Content: []llm.Block{result(c1.ToolUses()[0].ID, "/work/a.go: package a")}})
	c2, _ := ask(m, &llm.Request{Agent: "reviewer", Messages: msgs})
	msgs = append(msgs, c2, llm.UserText("and again"))
	_, err := ask(m, &llm.Request{Agent: "reviewer", Messages: msgs})
	d, _ := m.Divergences()
	if err == nil || len(d) != 1 || d[0].Kind != KindTurn || d[0].Turn != 3 {
		t.Errorf("err %v divergences %+v", err, d)
	}
}

func TestNormalizer(t *testing.T) {
	n := NewNormalizer("/tmp/scratch/ws", "/home/u/proj")
	for _, c := range []struct{ name, recorded, replayed string }{
		{"workspace path", "/home/u/proj/a.go:3: x", "/tmp/scratch/ws/a.go:3: x"},
		{"ids", "agentId: 01a2244c-5538-7360-8f76-81719118882a", "agentId: 01a22451-671b-73a3-8f42-3aa74a5baa35"},
		{"rfc3339", "at 2026-11-28T22:35:12.040414378Z", "at 2026-11-29T01:02:03Z"},
		{"datetime", "built 2026-11-28 22:35:12", "built 2026-11-30 10:00:00"},
		{"duration footer", "duration_ms: 1502", "duration_ms: 7"},
		{"duration json", `{"durationMs": 12}`, `{"durationMs": 900}`},
		{"durations", "ok in 1.25s (35ms, 120µs)", "ok in 0.50s (3ms, 9µs)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r, p := n.Recorded(c.recorded), n.Replayed(c.replayed); r != p {
				t.Errorf("%q and %q normalise to %q and %q", c.recorded, c.replayed, r, p)
			}
		})
	}
	for _, c := range []struct{ recorded, replayed string }{
		{"3 items", "4 items"},
		{"took 3s", "took 4s"}, // whole seconds are data, not timing
		{"/home/u/proj/a.go", "/home/u/other/a.go"},
	} {
		if n.Recorded(c.recorded) == n.Replayed(c.replayed) {
			t.Errorf("%q and %q compare equal", c.recorded, c.replayed)
		}
	}
}

func TestDiff(t *testing.T) {
	long := make([]string, 20)
	for i := range long {
		long[i] = fmt.Sprint("line ", i)
	}
	for _, c := range []struct{ a, b, want string }{
		{"same", "same", ""},
		{"a\nb\nc", "a\nB\nc", "@@ line 2 @@\n  a\n-b\n+B\n  c"},
		{"a", "a\nb", "@@ line 2 @@\n  a\n+b"},
		{"", strings.Join(long, "\n"), "@@ line 1 @@\n-\n+line 0\n+line 1\n+line 2\n+line 3\n+line 4\n+line 5\n+line 6\n+line 7\n+line 8\n+line 9\n+line 10\n+line 11\n+… (8 more lines)"},
	} {
		if got := Diff(c.a, c.b); got != c.want {
			t.Errorf("Diff(%q, %q) =\n%s\nwant\n%s", c.a, c.b, got, c.want)
		}
	}
}

// fakeTool is a tool that counts its runs.
type fakeTool struct {
	name   string
	access tool.Access
	runs   *int
}

func (f fakeTool) Info() tool.Info {
	return tool.Info{Name: f.name, Access: f.access, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (f fakeTool) Call(context.Context, tool.Env, json.RawMessage) (tool.Result, error) {
	*f.runs++
	return tool.Text("ran"), nil
}

func TestReadOnlyFeedsRecordedResults(t *testing.T) {
	rec := load(t)
	runs := 0
	tools := ReadOnly(rec, []tool.Tool{fakeTool{"Read", tool.AccessRead, &runs}, fakeTool{"Bash", tool.AccessExec, &runs}, fakeTool{"Agent", tool.AccessAgent, &runs}})
	readID := rec.All[1].Turns[0].Message.ToolUses()[0].ID
	ctx := context.Background()
	if r, _ := tools[0].Call(ctx, tool.Env{ToolUseID: readID}, nil); r.Content[0].Text != "ran" {
		t.Errorf("Read did not run: %v", r)
	}
	if r, _ := tools[2].Call(ctx, tool.Env{ToolUseID: "x"}, nil); r.Content[0].Text != "ran" {
		t.Errorf("Agent did not run: %v", r)
	}
	r, _ := tools[1].Call(ctx, tool.Env{ToolUseID: readID}, nil)
	if runs != 2 || r.IsError || r.Content[0].Text != "/work/a.go: package a" {
		t.Errorf("Bash ran (%d runs) or gave %v, want the recorded result", runs, r)
	}
	if r, _ := tools[1].Call(ctx, tool.Env{ToolUseID: "unknown"}, nil); !r.IsError || runs != 2 {
		t.Errorf("a call the recording lacks: %v", r)
	}
	if err := tools[1].(tool.Validating).ValidateInput(json.RawMessage(`[]`)); err == nil {
		t.Error("the wrapper dropped the tool's input check")
	}
}

func TestWrites(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "same.txt"), []byte("same\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := memSource{
		infos: []session.Info{{ID: "main-1", Agent: "main", Cwd: "/work"}, {ID: childSID, ParentID: "main-1", Agent: "writer", Cwd: "/work/sub"}},
		entries: map[string][]session.Entry{
			"main-1": {
				user(llm.Text("Write them")),
				assistant(
					llm.ToolUse("w1", "Write", json.RawMessage(`{"file_path":"new.txt","content":"new\n"}`)),
					llm.ToolUse("w2", "Write", json.RawMessage(`{"file_path":"/work/same.txt","content":"same\n"}`)),
					llm.ToolUse("w3", "Edit", json.RawMessage(`{"file_path":"failed.go","old_string":"a","new_string":"b"}`)),
					llm.ToolUse("w4", "Write", json.RawMessage(`{"file_path":"/elsewhere/x.txt","content":"x"}`)),
					llm.ToolUse("r1", "Read", json.RawMessage(`{"file_path":"read.go"}`)),
				),
				user(result("w1", "ok"), result("w2", "ok"), llm.ToolResult("w3", "old_string not found", true), result("w4", "ok"), result("r1", "x")),
				assistant(llm.Text("Done.")),
			},
			childSID: {
				user(llm.Text("Edit it")),
				assistant(llm.ToolUse("e1", "Edit", json.RawMessage(`{"file_path":"a.go","old_string":"a","new_string":"b"}`))),
				user(result("e1", "ok")),
				assistant(llm.Text("Edited.")),
			},
		},
	}
	rec, err := Load(context.Background(), src, "main-1")
	if err != nil {
		t.Fatal(err)
	}
	// new.txt is written; same.txt already holds what was written; the
	// failed Edit, the file outside the workspace and the Read do not
	// count; the child's Edit resolves against its own cwd.
	if got := rec.Writes("/work", ws); !slices.Equal(got, []string{"new.txt", "sub/a.go"}) {
		t.Errorf("Writes = %v", got)
	}
}

// A background run's last turn waits for the parent turn its recorded
// notification came after, so the replay delivers it at the same turn.
func TestModelHoldsABackgroundRunsLastTurn(t *testing.T) {
	src := memSource{
		infos: []session.Info{{ID: "main-1", Agent: "main", Cwd: "/work"}, {ID: childSID, ParentID: "main-1", Agent: "reviewer", Cwd: "/work"}},
		entries: map[string][]session.Entry{
			"main-1": {
				user(llm.Text("Review it")),
				assistant(llm.ToolUse("toolu_bg", "Agent", json.RawMessage(`{"subagent_type":"reviewer","prompt":"Review a.go","run_in_background":true}`))),
				user(result("toolu_bg", "Async agent launched successfully.\nagentId: "+childSID+" (use SendMessage…)")),
				assistant(llm.Text("Waiting.")),
				user(llm.Text("<task-notification>\n<task-id>" + childSID + "</task-id>\n<tool-use-id>toolu_bg</tool-use-id>\n<status>completed</status>\n</task-notification>")),
				assistant(llm.Text("Done.")),
			},
			childSID: {
				user(llm.Text("Review a.go")),
				assistant(llm.ToolUse("toolu_read", "Read", json.RawMessage(`{"file_path":"a.go"}`))),
				user(result("toolu_read", "package a")),
				assistant(llm.Text("All good.")),
			},
		},
	}
	rec, err := Load(context.Background(), src, "main-1")
	if err != nil {
		t.Fatal(err)
	}
	if n := rec.All[1].NotifiedAfter; n != 2 {
		t.Fatalf("NotifiedAfter = %d, want 2 (the notification followed main's second turn)", n)
	}
	m := NewModel(Config{Recording: rec})
	mainMsgs := []llm.Message{llm.UserText("Review it")}
	a1, err := ask(m, &llm.Request{Agent: "main", Messages: mainMsgs})
	if err != nil {
		t.Fatal(err)
	}
	childMsgs := []llm.Message{llm.UserText("Review a.go")}
	c1, err := ask(m, &llm.Request{Agent: "reviewer", Messages: childMsgs})
	if err != nil {
		t.Fatal(err)
	}
	childMsgs = append(childMsgs, c1, llm.Message{Role: llm.RoleUser, Content: []llm.Block{result("toolu_read", "package a")}})
	m.mu.Lock()
	fed := m.changed
	m.mu.Unlock()
	done := make(chan llm.Message, 1)
	go func() {
		c2, _ := ask(m, &llm.Request{Agent: "reviewer", Messages: childMsgs})
		done <- c2
	}()
	<-fed // the child's last turn is chosen; it must not be answered yet
	select {
	case c2 := <-done:
		t.Fatalf("the background run's last turn %q came before its parent's second turn", c2.Text())
	default:
	}
	mainMsgs = append(mainMsgs, a1, llm.Message{Role: llm.RoleUser, Content: []llm.Block{result("toolu_bg", "Async agent launched successfully.\nagentId: 01a2244c-5538-7360-8f76-00000000000f (use SendMessage…)")}})
	if a2, err := ask(m, &llm.Request{Agent: "main", Messages: mainMsgs}); err != nil || a2.Text() != "Waiting." {
		t.Fatalf("main's turn 2: %q %v", a2.Text(), err)
	}
	if c2 := <-done; c2.Text() != "All good." {
		t.Errorf("the child's last turn: %q", c2.Text())
	}
}
