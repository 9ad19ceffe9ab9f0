package cadre_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
)

// twoWorkers is a conversation whose first message starts two background
// "worker" runs that hold their model call until their context ends;
// started receives each one's prompt as it calls.
func twoWorkers(t *testing.T) (*convo, chan string) {
	f := newFixture(t)
	started := make(chan string, 4)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if req.Agent == "worker" {
			started <- req.Messages[0].Text()
			<-ctx.Done()
			return nil, ctx.Err()
		}
		if len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult {
			return llm.Reply(llm.Text("launched")), nil
		}
		if strings.Contains(last.Text(), "<task-notification>") {
			return llm.Reply(llm.Text("noted")), nil
		}
		return llm.Reply(
			llm.ToolUse("call-a", "Agent", json.RawMessage(`{"subagent_type":"worker","description":"Alpha job","prompt":"alpha","run_in_background":true,"name":"alpha"}`)),
			llm.ToolUse("call-b", "Agent", json.RawMessage(`{"subagent_type":"worker","description":"Beta job","prompt":"beta","run_in_background":true}`)),
		), nil
	}
	rt := f.open(t, cadre.Options{Agents: []cadre.Agent{{Name: "worker", Description: "Works.", Prompt: "Work.", Tools: []string{}}}})
	cv := openConvo(t, rt, cadre.OpenRequest{})
	cv.send("go")
	cv.waitResults(1)
	for range 2 {
		wait(t, started, "a worker's model call")
	}
	return cv, started
}

func TestSubagentsListsAndFindsRunsByOpenClawTargets(t *testing.T) {
	cv, _ := twoWorkers(t)
	ctx := context.Background()
	runs, err := cv.c.Subagents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("runs %+v", runs)
	}
	// The two calls of one message run in parallel: either may launch
	// first. Runs are numbered in launch order.
	first, second := runs[0], runs[1]
	if first.Index != 1 || second.Index != 2 {
		t.Fatalf("runs %+v, want #1 and #2", runs)
	}
	a, b := first, second
	if a.Name != "alpha" {
		a, b = b, a
	}
	if a.Description != "Alpha job" || a.Name != "alpha" || b.Description != "Beta job" {
		t.Fatalf("runs %+v", runs)
	}
	for _, r := range runs {
		if !r.Running() || !r.Background || r.Depth != 1 || r.Agent != "worker" || r.Key != "agent:worker:subagent:"+r.ID || r.ParentSessionID != cv.c.SessionID() {
			t.Errorf("run %+v", r)
		}
	}
	for _, tc := range []struct {
		target, want, err string
	}{
		{"1", first.ID, ""},
		{"#2", second.ID, ""},
		{"last", second.ID, ""},
		{a.ID, a.ID, ""},
		{a.Key, a.ID, ""},
		{"ALPHA", a.ID, ""},
		{b.ID[:len(b.ID)-4], b.ID, ""},
		{"#3", "", "no subagent #3: this conversation has 2"},
		{"0", "", "no subagent #0"},
		{"", "", "name a subagent"},
		{"nobody", "", `no subagent "nobody"`},
		{"../etc", "", `no subagent "../etc"`},
	} {
		got, err := cv.c.FindSubagent(ctx, tc.target)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("FindSubagent(%q) = %v, want error %q", tc.target, err, tc.err)
		case tc.err == "" && (err != nil || got.ID != tc.want):
			t.Errorf("FindSubagent(%q) = %s, %v; want %s", tc.target, got.ID, err, tc.want)
		}
	}

	info, err := cv.c.SubagentInfo(ctx, fmt.Sprint("#", a.Index))
	if err != nil {
		t.Fatal(err)
	}
	if info.SessionID != a.ID || info.TranscriptPath == "" || info.Prompt != "alpha" || info.Cleanup != "keep" || info.ArchiveAfterMinutes != 60 || info.Created.IsZero() || info.Status != cadre.TaskRunning {
		t.Errorf("info %+v", info)
	}

	reply, err := cv.c.SendSubagent(ctx, fmt.Sprint("#", b.Index), "also do gamma")
	if err != nil || !strings.Contains(reply, "queued") {
		t.Errorf("SendSubagent = %q, %v", reply, err)
	}
	if _, err := cv.c.SendSubagent(ctx, fmt.Sprint("#", b.Index), " "); err == nil {
		t.Error("an empty message was sent")
	}

	stopped, err := cv.c.StopSubagent(ctx, "#1")
	if err != nil || !slices.Equal(stopped, []string{first.ID}) {
		t.Fatalf("StopSubagent(#1) = %v, %v", stopped, err)
	}
	runs, _ = cv.c.Subagents(ctx)
	if runs[0].Index != 1 || runs[0].Status != cadre.TaskKilled || runs[0].Ended.IsZero() || !runs[1].Running() {
		t.Errorf("after stopping #1: %+v", runs)
	}
	if _, err := cv.c.StopSubagent(ctx, "#1"); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("stopping #1 again = %v, want 'not running'", err)
	}
	stopped, err = cv.c.StopSubagent(ctx, "all")
	if err != nil || !slices.Equal(stopped, []string{second.ID}) {
		t.Fatalf("StopSubagent(all) = %v, %v", stopped, err)
	}
}

// /stop ends the turn in progress and every subagent; the conversation
// takes the next message.
func TestAbortStopsTheTurnAndEverySubagent(t *testing.T) {
	cv, _ := twoWorkers(t)
	ctx := context.Background()
	stopped, err := cv.c.Abort(ctx)
	if err != nil || len(stopped) != 2 {
		t.Fatalf("Abort = %v, %v", stopped, err)
	}
	runs, _ := cv.c.Subagents(ctx)
	for _, r := range runs {
		if r.Status != cadre.TaskKilled {
			t.Errorf("run #%d after /stop: %s", r.Index, r.Status)
		}
	}
}

func TestSubagentLogReadsTheTranscript(t *testing.T) {
	f := newFixture(t)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		result := len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult
		switch {
		case req.Agent == "reader" && result:
			return llm.Reply(llm.Text("read: " + last.Content[0].ResultText())), nil
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
	cv.waitResults(1)
	ctx := context.Background()
	for _, tc := range []struct {
		limit int
		tools bool
		want  []string
	}{
		{0, false, []string{"user: Read notes.txt.", "assistant: read: "}},
		{1, false, []string{"assistant: read: "}},
		{0, true, []string{"user: Read notes.txt.", `assistant: → Read {"file_path":"notes.txt"}`, "user: ← ", "assistant: read: "}},
	} {
		run, log, err := cv.c.SubagentLog(ctx, "1", tc.limit, tc.tools)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status != cadre.TaskCompleted || run.Description != "Read notes" || run.Background {
			t.Errorf("run %+v", run)
		}
		if len(log) != len(tc.want) {
			t.Errorf("log(%d, %v) = %+v, want %q", tc.limit, tc.tools, log, tc.want)
			continue
		}
		for i, m := range log {
			if got := m.Role + ": " + m.Text; !strings.HasPrefix(got, tc.want[i]) {
				t.Errorf("log(%d, %v)[%d] = %q, want prefix %q", tc.limit, tc.tools, i, got, tc.want[i])
			}
		}
		if last := log[len(log)-1]; !strings.Contains(last.Text, "PAPAYA") {
			t.Errorf("last message %q lacks the file's text", last.Text)
		}
	}
	if _, _, err := cv.c.SubagentLog(ctx, "1", -1, false); err == nil {
		t.Error("a negative limit was accepted")
	}
}

// A resumed conversation lists the runs of its earlier life first, from
// the store: a foreground run by its session, a background one by its
// task record; the runs of the new life follow.
func TestSubagentsOfAResumedConversation(t *testing.T) {
	f := newFixture(t)
	f.fn = func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		switch {
		case req.Agent == "helper":
			return llm.Reply(llm.Text("helped")), nil
		case strings.Contains(last.Text(), "<task-notification>"):
			return llm.Reply(llm.Text("noted")), nil
		case len(last.Content) > 0 && last.Content[0].Type == llm.BlockToolResult:
			return llm.Reply(llm.Text("done")), nil
		case strings.Contains(last.Text(), "again"):
			return llm.Reply(llm.ToolUse("call-3", "Agent", json.RawMessage(`{"subagent_type":"helper","description":"Third help","prompt":"three"}`))), nil
		}
		return llm.Reply(
			llm.ToolUse("call-1", "Agent", json.RawMessage(`{"subagent_type":"helper","description":"First help","prompt":"one"}`)),
			llm.ToolUse("call-2", "Agent", json.RawMessage(`{"subagent_type":"helper","description":"Second help","prompt":"two","run_in_background":true}`)),
		), nil
	}
	rt := f.open(t, cadre.Options{Agents: []cadre.Agent{{Name: "helper", Description: "Helps.", Prompt: "Help.", Tools: []string{}}}})
	first := openConvo(t, rt, cadre.OpenRequest{})
	first.send("go")
	first.close()
	ctx := context.Background()
	before, err := first.c.Subagents(ctx)
	if err != nil || len(before) != 2 {
		t.Fatalf("first life: %+v, %v", before, err)
	}

	again := openConvo(t, rt, cadre.OpenRequest{Resume: first.c.SessionID()})
	again.send("again")
	again.waitResults(1)
	runs, err := again.c.Subagents(ctx)
	if err != nil || len(runs) != 3 {
		t.Fatalf("resumed: %+v, %v", runs, err)
	}
	for i, r := range runs {
		if r.Index != i+1 || r.Status != cadre.TaskCompleted || r.Depth != 1 {
			t.Errorf("run %d: %+v", i, r)
		}
	}
	byID := map[string]cadre.SubagentRun{}
	for _, r := range runs[:2] {
		byID[r.ID] = r
	}
	for _, b := range before {
		got := byID[b.ID]
		want := b.Description // a foreground run's session title is its description too
		if got.Description != want || got.Background != b.Background {
			t.Errorf("stored run %s: %+v, want description %q", b.ID, got, want)
		}
	}
	if runs[2].Description != "Third help" || byID[runs[2].ID].ID != "" {
		t.Errorf("the new life's run is not last: %+v", runs)
	}
	// The earlier foreground run's task is read from its transcript.
	for _, b := range before {
		info, err := again.c.SubagentInfo(ctx, b.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"First help": "one", "Second help": "two"}[b.Description]
		if info.Prompt != want {
			t.Errorf("info of %q: prompt %q, want %q", b.Description, info.Prompt, want)
		}
	}
}
