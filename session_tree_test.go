package cadre_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

func TestSessionTreeNamesParentChildrenAndSiblings(t *testing.T) {
	f := newFixture(t)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if req.Agent == "helper" {
			return llm.Reply(llm.Text("helped")), nil
		}
		if len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult {
			return llm.Reply(llm.Text("main done")), nil
		}
		return llm.Reply(
			llm.ToolUse("call-1", "Agent", json.RawMessage(`{"subagent_type":"helper","description":"First help","prompt":"one"}`)),
			llm.ToolUse("call-2", "Agent", json.RawMessage(`{"subagent_type":"helper","description":"Second help","prompt":"two"}`)),
		), nil
	}
	rt := f.open(t, cadre.Options{Agents: []cadre.Agent{{Name: "helper", Description: "Helps.", Prompt: "Help.", Tools: []string{}}}})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("go")
	cv.waitResults(1)
	ctx := context.Background()
	runs, err := cv.c.Subagents(ctx)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v, %v", runs, err)
	}
	mainID := cv.c.SessionID()
	type node struct{ ID, Agent, Description string }
	nodes := func(ns []cadre.SessionNode) []node {
		var out []node
		for _, n := range ns {
			out = append(out, node{n.ID, n.Agent, n.Description})
		}
		// Parallel calls start in any order.
		slices.SortFunc(out, func(a, b node) int { return strings.Compare(a.Description, b.Description) })
		return out
	}
	slices.SortFunc(runs, func(a, b cadre.SubagentRun) int { return strings.Compare(a.Description, b.Description) })
	kids := []node{{runs[0].ID, "helper", "First help"}, {runs[1].ID, "helper", "Second help"}}

	top, err := rt.SessionTree(ctx, mainID)
	if err != nil {
		t.Fatal(err)
	}
	if top.Parent != nil || top.Session.ID != mainID || len(top.Siblings) != 1 || top.Position != 0 {
		t.Errorf("main's tree: %+v", top)
	}
	if d := gocmp.Diff(kids, nodes(top.Children)); d != "" {
		t.Errorf("main's children (-want +got):\n%s", d)
	}
	second, err := rt.SessionTree(ctx, runs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if second.Parent == nil || second.Parent.ID != mainID || second.Siblings[second.Position].ID != runs[1].ID || len(second.Children) != 0 || second.Session.Description != "Second help" {
		t.Errorf("second child's tree: %+v", second)
	}
	if d := gocmp.Diff(kids, nodes(second.Siblings)); d != "" {
		t.Errorf("siblings (-want +got):\n%s", d)
	}
	for _, bad := range []string{"../x", "00000000-0000-4000-8000-000000000000"} {
		if _, err := rt.SessionTree(ctx, bad); err == nil {
			t.Errorf("SessionTree(%q) succeeded", bad)
		}
	}
	if _, err := rt.SessionTree(ctx, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, cadre.ErrNotFound) {
		t.Errorf("an unknown session: %v, want ErrNotFound", err)
	}
}

func TestSessionRowsOrderATree(t *testing.T) {
	s := func(id, parent string) cadre.Session { return cadre.Session{ID: id, ParentID: parent} }
	for _, tc := range []struct {
		name string
		in   []cadre.Session
		want []string
	}{
		{"empty", nil, nil},
		{"children follow their parent", []cadre.Session{s("m2", ""), s("c1", "m1"), s("m1", ""), s("g1", "c1"), s("c2", "m2")},
			[]string{"m2/0", "c2/1", "m1/0", "c1/1", "g1/2"}},
		{"an orphan stands alone", []cadre.Session{s("c9", "gone"), s("m1", "")}, []string{"c9/0", "m1/0"}},
		{"a cycle does not loop", []cadre.Session{s("a", "b"), s("b", "a"), s("m", "")}, []string{"m/0"}},
		{"its own parent", []cadre.Session{s("a", "a")}, []string{"a/0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range cadre.SessionRows(tc.in) {
				got = append(got, r.ID+"/"+string(rune('0'+r.Depth)))
			}
			if d := gocmp.Diff(tc.want, got); d != "" {
				t.Errorf("rows (-want +got):\n%s", d)
			}
		})
	}
}

// A running subagent's session is watched live: what it recorded so far,
// then what it does next.
func TestWatchSessionFollowsARunningSubagent(t *testing.T) {
	f := newFixture(t)
	blocked, release := make(chan struct{}, 1), make(chan struct{})
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		result := len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult
		switch {
		case req.Agent == "reader" && result:
			blocked <- struct{}{}
			select {
			case <-release:
				return llm.Reply(llm.Text("CHILD-DONE")), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		case req.Agent == "reader":
			return llm.Reply(llm.ToolUse("r1", "Read", json.RawMessage(`{"file_path":"notes.txt"}`))), nil
		case result:
			return llm.Reply(llm.Text("main done")), nil
		}
		return llm.Reply(llm.ToolUse("call-r", "Agent", json.RawMessage(`{"subagent_type":"reader","description":"Read notes","prompt":"Read notes.txt."}`))), nil
	}
	rt := f.open(t, cadre.Options{Agents: []cadre.Agent{{Name: "reader", Description: "Reads.", Prompt: "Read.", Tools: []string{"Read"}}}})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("go")
	wait(t, blocked, "the child's second call")
	run, err := cv.c.FindSubagent(context.Background(), "1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan cadre.Event, 16)
	done := make(chan error, 1)
	go func() {
		defer close(done)
		for ev, err := range rt.WatchSession(ctx, run.ID) {
			if err != nil {
				done <- err
				return
			}
			got <- ev
		}
	}()
	var texts []string
	next := func() string {
		ev := wait(t, got, "a watched event")
		if ev.AgentID != run.ID || ev.Message == nil {
			t.Errorf("event %+v", ev)
			return ""
		}
		return string(ev.Type) + ": " + logLine(*ev.Message)
	}
	for range 3 {
		texts = append(texts, next())
	}
	close(release)
	texts = append(texts, next())
	want := []string{"user: Read notes.txt.", "assistant: →Read", "user: ←", "assistant: CHILD-DONE"}
	for i := range want {
		if !strings.HasPrefix(texts[i], want[i]) {
			t.Errorf("event %d: %q, want prefix %q", i, texts[i], want[i])
		}
	}
	cv.waitResults(1)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(deadline):
		t.Fatal("the watch did not end with its context")
	}
	for _, err := range rt.WatchSession(context.Background(), "../x") {
		if err == nil {
			t.Error("watching a bad id yielded no error")
		}
		break
	}
}

// logLine renders a message's text, tool calls and results on one line.
func logLine(m llm.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		switch c.Type {
		case llm.BlockText:
			b.WriteString(c.Text)
		case llm.BlockToolUse:
			b.WriteString("→" + c.Name)
		case llm.BlockToolResult:
			b.WriteString("←" + c.ResultText())
		}
	}
	return b.String()
}
