package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/jsonpart"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/llm"
)

// run is a fixed conversation: init, a tool call, its result, a subagent's
// message, the answer and the result.
func run() []cadre.Event {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	sid := "0190a000-0000-7000-8000-000000000001"
	read := llm.ToolUse("toolu_01", "Read", json.RawMessage(`{"file_path":"/w/README.md"}`))
	return []cadre.Event{
		{Type: cadre.EventSystem, Subtype: "init", SessionID: sid, UUID: "u-init", Time: at,
			Init: &cadre.InitInfo{Cwd: "/w", Tools: []string{"Read", "Bash"}, Model: "anthropic:claude-sonnet-5-5", PermissionMode: "default", Version: "0.1.0"}},
		{Type: cadre.EventAssistant, SessionID: sid, UUID: "u-1", Time: at,
			Message:   &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Reading."), read}},
			Assistant: &cadre.AssistantInfo{MessageID: "msg_01", Model: "claude-sonnet-5-5", StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 100, OutputTokens: 20}}},
		{Type: cadre.EventUser, SessionID: sid, UUID: "u-2", Time: at,
			Message:       &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("toolu_01", "     1\thello", false)}},
			ToolUseResult: map[string]any{"type": "text"}},
		{Type: cadre.EventAssistant, SessionID: sid, UUID: "u-3", Time: at, ParentToolUseID: "toolu_02", AgentID: "a1b2", AgentType: "reviewer", TaskDescription: "review code",
			Message:   &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("LGTM")}},
			Assistant: &cadre.AssistantInfo{MessageID: "msg_02", Model: "claude-sonnet-5-5", StopReason: llm.StopEndTurn}},
		{Type: cadre.EventAssistant, SessionID: sid, UUID: "u-4", Time: at,
			Message:   &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("It says hello.")}},
			Assistant: &cadre.AssistantInfo{MessageID: "msg_03", Model: "claude-sonnet-5-5", StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 130, OutputTokens: 8, CacheReadInputTokens: 90}}},
		{Type: cadre.EventResult, Subtype: "success", SessionID: sid, UUID: "u-5", Time: at,
			Result: &cadre.ResultInfo{Result: "It says hello.", NumTurns: 2, Duration: 1500 * time.Millisecond, APIDuration: 1200 * time.Millisecond,
				TotalCostUSD: llm.USD(0.000867), StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 230, OutputTokens: 28, CacheReadInputTokens: 90},
				ModelUsage: map[string]cadre.ModelUsage{"anthropic:claude-sonnet-5-5": {Usage: llm.Usage{InputTokens: 230, OutputTokens: 28, CacheReadInputTokens: 90}, CostUSD: llm.USD(0.000867)}}}},
	}
}

func render(t *testing.T, f Format, verbose bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := New(&buf, f, verbose)
	for _, e := range run() {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		file    string
		format  Format
		verbose bool
	}{
		{"stream-verbose.jsonl", StreamJSON, true},
		{"stream-quiet.jsonl", StreamJSON, false},
		{"result.json", JSON, false},
		{"verbose.json", JSON, true},
		{"text.txt", Text, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			golden.Check(t, filepath.Join("testdata", tc.file), render(t, tc.format, tc.verbose))
		})
	}
}

// TestLineShapes checks the keys a Claude Code client reads are all there,
// independent of the golden files.
func TestLineShapes(t *testing.T) {
	want := map[string][]string{
		"system":    {"type", "subtype", "cwd", "session_id", "tools", "model", "permissionMode", "uuid"},
		"assistant": {"type", "message", "parent_tool_use_id", "session_id", "uuid"},
		"user":      {"type", "message", "parent_tool_use_id", "session_id", "uuid"},
		"result":    {"type", "subtype", "is_error", "result", "num_turns", "duration_ms", "duration_api_ms", "total_cost_usd", "usage", "session_id", "uuid"},
	}
	msgKeys := []string{"id", "type", "role", "model", "content", "usage", "stop_reason"}
	for _, line := range strings.Split(strings.TrimSpace(string(render(t, StreamJSON, true))), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line does not parse: %v: %s", err, line)
		}
		typ := m["type"].(string)
		for _, k := range want[typ] {
			if _, ok := m[k]; !ok {
				t.Errorf("%s line lacks %q: %s", typ, k, line)
			}
		}
		if typ == "assistant" {
			msg := m["message"].(map[string]any)
			for _, k := range msgKeys {
				if _, ok := msg[k]; !ok {
					t.Errorf("assistant message lacks %q", k)
				}
			}
		}
	}
}

func TestParseFormat(t *testing.T) {
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), "stream-json") {
		t.Errorf("err = %v", err)
	}
}

func TestSubagentSystemLineIsTagged(t *testing.T) {
	e := cadre.Event{Type: cadre.EventSystem, Subtype: "compact_boundary", SessionID: "s", UUID: "u",
		ParentToolUseID: "toolu_1", AgentID: "a1", AgentType: "reviewer",
		Compact: &cadre.CompactInfo{Trigger: "auto", PreTokens: 9000}}
	var buf bytes.Buffer
	w := New(&buf, StreamJSON, true)
	w.Write(e)
	w.Close()
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m["type"] != "system" || m["parent_tool_use_id"] != "toolu_1" || m["agent_id"] != "a1" || m["subagent_type"] != "reviewer" || m["session_id"] != "s" {
		t.Errorf("line %v", m)
	}
	var quiet bytes.Buffer
	q := New(&quiet, StreamJSON, false)
	q.Write(e)
	q.Close()
	if quiet.Len() != 0 {
		t.Errorf("a subagent's system line without --verbose: %s", quiet.String())
	}
}

// TestTaskLines: the task_* lines are shaped from the typed payload with
// the keys Claude Code writes for each subtype; they show without
// --verbose, being the main session's.
func TestTaskLines(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	task := func(subtype, uuid string, p cadre.TaskEvent) cadre.Event {
		return cadre.Event{Type: cadre.EventSystem, Subtype: subtype, SessionID: "s", UUID: uuid, Time: at, Task: &p}
	}
	evs := []cadre.Event{
		task(cadre.SubtypeTaskStarted, "u-1", cadre.TaskEvent{
			TaskID: "t1", ToolUseID: "toolu_1", Description: "index <the> repo", AgentType: "indexer",
			Background: true, SpawnDepth: 1, Kind: cadre.TaskLocalAgent, Prompt: "Index & report",
		}),
		task(cadre.SubtypeTaskProgress, "u-2", cadre.TaskEvent{
			TaskID: "t1", ToolUseID: "toolu_1", Description: "index <the> repo", AgentType: "indexer",
			Usage: &cadre.TaskUsage{TotalTokens: 1234, ToolUses: 3, Duration: 4500 * time.Millisecond}, LastToolName: "Grep",
		}),
		task(cadre.SubtypeTaskNotification, "u-3", cadre.TaskEvent{
			TaskID: "t1", ToolUseID: "toolu_1", Status: cadre.TaskCompleted, OutputFile: "/tmp/t1.output",
			Summary: `Agent "index <the> repo" completed`, Usage: &cadre.TaskUsage{TotalTokens: 2000, ToolUses: 4, Duration: 6 * time.Second},
		}),
		task(cadre.SubtypeTaskNotification, "u-4", cadre.TaskEvent{
			TaskID: "t2", ToolUseID: "toolu_2", Status: cadre.TaskKilled, OutputFile: "/tmp/t2.output", Summary: `Agent "x" was stopped`,
		}),
		task(cadre.SubtypeTaskNotification, "u-5", cadre.TaskEvent{
			TaskID: "t3", ToolUseID: "toolu_3", Status: cadre.TaskTimeout, OutputFile: "/tmp/t3.output", Summary: `Agent "y" timed out`,
		}),
	}
	var buf bytes.Buffer
	w := New(&buf, StreamJSON, false)
	for _, e := range evs {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	golden.Check(t, filepath.Join("testdata", "task-lines.jsonl"), buf.Bytes())
}

// TestShellTaskLines: a background shell's (local_bash) lines, shaped as
// Claude Code's for a shell: no subagent_type, prompt or spawn_depth.
func TestShellTaskLines(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	task := func(subtype, uuid string, p cadre.TaskEvent) cadre.Event {
		return cadre.Event{Type: cadre.EventSystem, Subtype: subtype, SessionID: "s", UUID: uuid, Time: at, Task: &p}
	}
	var buf bytes.Buffer
	w := New(&buf, StreamJSON, false)
	for _, e := range []cadre.Event{
		task(cadre.SubtypeTaskStarted, "u-1", cadre.TaskEvent{
			TaskID: "b1", ToolUseID: "toolu_1", Description: "start the dev server", Background: true, Kind: cadre.TaskLocalBash,
		}),
		// Any other line ends the burst: the list of background tasks
		// is written before it.
		{Type: cadre.EventSystem, Subtype: cadre.SubtypeCompactBoundary, SessionID: "s", UUID: "u-c", Compact: &cadre.CompactInfo{Trigger: "auto", PreTokens: 11}},
		task(cadre.SubtypeTaskNotification, "u-2", cadre.TaskEvent{
			TaskID: "b1", ToolUseID: "toolu_1", Status: cadre.TaskCompleted, OutputFile: "/tmp/b1.output",
			Summary: `Background command "start the dev server" completed (exit code 0)`, Usage: &cadre.TaskUsage{Duration: 1500 * time.Millisecond},
		}),
	} {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	golden.Check(t, filepath.Join("testdata", "shell-task-lines.jsonl"), buf.Bytes())
	if strings.Contains(buf.String(), "subagent_type") || strings.Contains(buf.String(), `"prompt"`) {
		t.Errorf("a shell's lines name an agent type or prompt:\n%s", buf.String())
	}
}

// TestCompactionLine: a compaction boundary's line, Claude Code's shape.
func TestCompactionLine(t *testing.T) {
	line, err := json.Marshal(Line(cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeCompactBoundary, SessionID: "root", UUID: "u",
		Compact: &cadre.CompactInfo{Trigger: "auto", PreTokens: 11}}))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"system","subtype":"compact_boundary","compact_metadata":{"pre_tokens":11,"trigger":"auto"},"uuid":"u","session_id":"root"}`; string(line) != want {
		t.Errorf("line\n got %s\nwant %s", line, want)
	}
}

// A change of a team's task list is a system line of cadre's own; a
// teammate's carries the spawn call that added it.
func TestTeamTaskLine(t *testing.T) {
	line, err := json.Marshal(Line(cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTeamTask, SessionID: "root", UUID: "u",
		ParentToolUseID: "toolu_alice", AgentID: "a1", AgentType: "general-purpose",
		TeamTask: &cadre.TeamTaskChange{Team: "default", By: "alice", Change: "updated", Fields: []string{"status"}, From: "in_progress", To: "completed",
			Task: cadre.TeamTaskRef{ID: "1", Subject: "write the parser", Status: "completed", Owner: "alice", BlockedBy: []string{}}, Unblocked: []string{"3"}}}))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"system","subtype":"team_task_changed","by":"alice","change":"updated","fields":["status"],"status_change":{"from":"in_progress","to":"completed"},"task":{"id":"1","subject":"write the parser","status":"completed","owner":"alice","blocked_by":[]},"team":"default","unblocked":["3"],"parent_tool_use_id":"toolu_alice","agent_id":"a1","subagent_type":"general-purpose","uuid":"u","session_id":"root"}`
	if string(line) != want {
		t.Errorf("line\n got %s\nwant %s", line, want)
	}
}

// TestBackgroundListAfterAHiddenLine: the line listing the background
// tasks is the session's. A subagent's line, left out without --verbose,
// neither takes it out of the output nor ends the burst: the list follows
// the changes made around it, once, before the next line written.
func TestBackgroundListAfterAHiddenLine(t *testing.T) {
	started := func(id, uuid string) cadre.Event {
		return cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskStarted, SessionID: "s", UUID: uuid,
			Task: &cadre.TaskEvent{TaskID: id, ToolUseID: "toolu_" + id, Description: "index", AgentType: "indexer", Background: true, Kind: cadre.TaskLocalAgent}}
	}
	child := cadre.Event{Type: cadre.EventAssistant, SessionID: "s", UUID: "u-2", ParentToolUseID: "toolu_t1", AgentID: "t1",
		Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("working")}}}
	main := cadre.Event{Type: cadre.EventAssistant, SessionID: "s", UUID: "u-4",
		Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("waiting")}}}
	var buf bytes.Buffer
	w := New(&buf, StreamJSON, false)
	for _, e := range []cadre.Event{started("t1", "u-1"), child, main, started("t2", "u-3"), child, main} {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	var subtypes []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m struct{ Subtype string }
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		subtypes = append(subtypes, m.Subtype)
	}
	want := []string{"task_started", "background_tasks_changed", "", "task_started", "background_tasks_changed", ""}
	if !slices.Equal(subtypes, want) {
		t.Errorf("lines %v, want %v:\n%s", subtypes, want, buf.String())
	}
	if !strings.Contains(buf.String(), `"tasks":[{"task_id":"t1","run_id":"t1","task_type":"local_agent","subagent_type":"indexer","description":"index"},{"task_id":"t2"`) {
		t.Errorf("the list does not hold both tasks:\n%s", buf.String())
	}
}

// TestLongBackgroundListSpaced: a list longer than bigList is written at
// most once every bigListGap, at the first line of another kind after it,
// and at the end; a short one is written at each such line.
func TestLongBackgroundListSpaced(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	long := strings.Repeat("a description long enough to fill the list ", 4)
	for _, c := range []struct {
		name        string
		tasks       int
		description string
		untimed     bool  // events without a time, which wait for nothing
		want        []int // the lines' lengths, in tasks, of each list written
	}{
		{"short", 3, "index", false, []int{3, 6, 9, 12, 15}},
		{"long", 300, long, false, []int{300, 1200, 1500}}, // the last at the end
		{"long, untimed", 300, long, true, []int{300, 600, 900, 1200, 1500}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := New(&buf, StreamJSON, false)
			n := 0
			// Five rounds 100 ms apart: a burst of starts, then the main
			// agent's reply, which ends the burst.
			for round := range 5 {
				now := at.Add(time.Duration(round) * 100 * time.Millisecond)
				if c.untimed {
					now = time.Time{}
				}
				for range c.tasks {
					n++
					id := fmt.Sprintf("t%d", n)
					e := cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskStarted, SessionID: "s", UUID: "u-" + id, Time: now,
						Task: &cadre.TaskEvent{TaskID: id, ToolUseID: "toolu_" + id, Description: c.description, AgentType: "indexer", Background: true, Kind: cadre.TaskLocalAgent}}
					if err := w.Write(e); err != nil {
						t.Fatal(err)
					}
				}
				reply := cadre.Event{Type: cadre.EventAssistant, SessionID: "s", UUID: fmt.Sprintf("r-%d", round), Time: now,
					Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("waiting")}}}
				if err := w.Write(reply); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				var m struct {
					Subtype string
					Tasks   []json.RawMessage
				}
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatal(err)
				}
				if m.Subtype == "background_tasks_changed" {
					got = append(got, len(m.Tasks))
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("lists of %v tasks, want %v", got, c.want)
			}
		})
	}
}

// TestUserLineInParts: a user line written a block at a time is byte for
// byte the line encoding/json writes in one call: results shown as
// strings and as blocks, a subagent's fields, a tool's structured result,
// HTML characters left unescaped, and a message with no content.
func TestUserLineInParts(t *testing.T) {
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	odd := `<task-notification> "q" & </b>` + "\u2028\t"
	tools := map[string]string{"toolu_1": "Bash", "toolu_2": "Agent", "toolu_3": "mcp__x__y"}
	for name, e := range map[string]cadre.Event{
		"results": {Type: cadre.EventUser, SessionID: "s", UUID: "u", Time: at, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult("toolu_1", odd, true), llm.ToolResult("toolu_2", odd, false), llm.ToolResult("toolu_3", "x", false),
			{Type: llm.BlockToolResult, ToolUseID: "toolu_4", Content: []llm.Block{llm.Text("a"), {Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: "image/png", Data: "iVBOR"}}}},
		}}, ToolUseResult: map[string]any{"stdout": odd, "interrupted": false}},
		"several calls' structured results": {Type: cadre.EventUser, SessionID: "s", UUID: "u", Time: at, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult("toolu_2", odd, false), llm.ToolResult("toolu_10", "x", false),
		}}, ToolUseResult: map[string]any{
			"toolu_2":  map[string]any{"status": "async_launched", "prompt": odd, "isAsync": true},
			"toolu_10": map[string]any{"status": "async_launched", "agentId": "a2"},
			"toolu_3":  nil,
		}},
		"one member's structured result": {Type: cadre.EventUser, SessionID: "s", UUID: "u", Time: at, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult("toolu_1", "x", false)}}, ToolUseResult: map[string]any{"stdout": odd}},
		"an empty structured result, omitted": {Type: cadre.EventUser, SessionID: "s", UUID: "u", Time: at, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{
			llm.ToolResult("toolu_1", "x", false)}}, ToolUseResult: map[string]any{}},
		"subagent": {Type: cadre.EventUser, SessionID: "s", UUID: "u", Time: at, ParentToolUseID: "toolu_9", AgentID: "a1", AgentType: "Explore",
			Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.Text(odd)}}},
		"no content": {Type: cadre.EventUser, SessionID: "s", UUID: "u", Time: at, Message: &llm.Message{Role: llm.RoleUser}},
		"no message": {Type: cadre.EventUser, SessionID: "s", UUID: "u", Time: at},
	} {
		u := userLine(e, tools)
		var whole, parts bytes.Buffer
		if err := encode(&whole, u); err != nil {
			t.Fatal(err)
		}
		if err := u.writeTo(&parts, jsonpart.New()); err != nil {
			t.Fatal(err)
		}
		if parts.String() != whole.String() {
			t.Errorf("%s:\n got %s\nwant %s", name, parts.String(), whole.String())
		}
	}
	bad := userLine(cadre.Event{Type: cadre.EventUser, SessionID: "s", Message: &llm.Message{Role: llm.RoleUser},
		ToolUseResult: map[string]any{"toolu_1": 1, "toolu_2": func() {}}}, tools)
	var parts bytes.Buffer
	if err := bad.writeTo(&parts, jsonpart.New()); err == nil || parts.Len() != 0 {
		t.Errorf("a structured result that cannot be encoded: %v, wrote %q; want an error and nothing written", err, parts.String())
	}
}
