package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/npm"
)

// The ACP test drives `cadre acp` with the official TypeScript ACP library
// (testdata/acp_driver.mjs, an editor in a few lines), against the fake
// Anthropic server, and checks what the editor saw.

const acpReviewerFile = `---
name: acp-reviewer
description: Reviews notes and records the review.
tools: Bash
model: inherit
---
ACP-REVIEWER: you review the notes and record that you did.
`

// acpModel plays every agent: the main agent starts acp-reviewer for the
// first prompt, a background general-purpose subagent for the second and
// answers its notification, runs a long Bash command for the third, and
// calls the editor-given MCP server's echo tool after session/load;
// the reviewer records its review with a Bash call, which asks permission.
func acpModel(req testkit.Request) testkit.Reply {
	c := bgDecode(req)
	if c.err != nil || len(c.msgs) == 0 {
		return testkit.Reply{Text: "bad request"}
	}
	last := c.msgs[len(c.msgs)-1]
	results := map[string]string{}
	var text string
	for _, b := range last.Blocks {
		switch b.Type {
		case "tool_result":
			results[b.ToolUseID] = b.resultText()
		case "text":
			text += b.Text
		}
	}
	if c.child() && !strings.Contains(c.system, "ACP-REVIEWER") {
		return testkit.Reply{Text: "Background check done."}
	}
	if strings.Contains(c.system, "ACP-REVIEWER") {
		if _, ok := results["toolu_acp_child_bash"]; ok {
			return testkit.Reply{Text: "Reviewed: the notes hold the secret word."}
		}
		return testkit.Reply{Text: "I will record the review.", ToolCalls: []testkit.ToolCall{{
			ID: "toolu_acp_child_bash", Name: "Bash", Input: map[string]any{"command": "echo reviewed > reviewed.txt", "description": "Record the review"},
		}}}
	}
	switch {
	case results["toolu_acp_agent"] != "":
		return testkit.Reply{Text: "The reviewer is done."}
	case results["toolu_acp_echo"] != "":
		return testkit.Reply{Text: "Echo seen."}
	case strings.Contains(text, "Echo through MCP"):
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_acp_echo", Name: "mcp__everything__echo", Input: map[string]any{"message": "hello over ACP"}}}}
	case strings.Contains(text, "<task-notification>"):
		// Also when a fast child's notification comes with its launch.
		return testkit.Reply{Text: "The background check finished."}
	case results["toolu_acp_bg"] != "":
		return testkit.Reply{Text: "Started the background check."}
	case strings.Contains(text, "background check"):
		return testkit.Reply{ToolCalls: []testkit.ToolCall{bgAgentCall("toolu_acp_bg", "Background check", "Check the notes in the background")}}
	case strings.Contains(text, "long job"):
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_acp_sleep", Name: "Bash", Input: map[string]any{"command": "sleep 600"}}}}
	case strings.Contains(text, "Review the notes"):
		return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_acp_agent", Name: "Agent", Input: map[string]any{
			"description": "Review the notes", "prompt": "Review notes.txt and record it", "subagent_type": "acp-reviewer",
		}}}}
	}
	return testkit.Reply{Text: "unexpected request"}
}

// acpUpdate is a session/update as the driver recorded it.
type acpUpdate struct {
	SessionUpdate string          `json:"sessionUpdate"`
	ToolCallID    string          `json:"toolCallId"`
	Title         string          `json:"title"`
	Kind          string          `json:"kind"`
	Status        string          `json:"status"`
	Content       json.RawMessage `json:"content"`
	Meta          struct {
		Cadre struct {
			ParentToolCallID string `json:"parentToolCallId"`
			Agent            string `json:"agent"`
		} `json:"cadre"`
	} `json:"_meta"`
}

func (u acpUpdate) text() string { return string(u.Content) }

// dumpUpdates shows updates in failure messages.
func dumpUpdates(ups []acpUpdate) string {
	var b strings.Builder
	for _, u := range ups {
		fmt.Fprintf(&b, "\n  %s %s %q %s %s", u.SessionUpdate, u.ToolCallID, u.Title, u.Status, u.Content)
	}
	return b.String()
}

type acpPermission struct {
	ToolCall struct {
		ToolCallID string `json:"toolCallId"`
		Title      string `json:"title"`
	} `json:"toolCall"`
	Options []struct {
		OptionID string `json:"optionId"`
		Kind     string `json:"kind"`
	} `json:"options"`
}

type acpConnection struct {
	Updates            []acpUpdate     `json:"updates"`
	PermissionRequests []acpPermission `json:"permissionRequests"`
	Exit               struct {
		Code   *int    `json:"code"`
		Signal *string `json:"signal"`
	} `json:"exit"`
	Stderr string `json:"stderr"`
}

type acpReport struct {
	Steps struct {
		Initialize struct {
			AgentCapabilities struct {
				LoadSession        bool `json:"loadSession"`
				PromptCapabilities struct {
					EmbeddedContext bool `json:"embeddedContext"`
				} `json:"promptCapabilities"`
			} `json:"agentCapabilities"`
			AgentInfo struct{ Name string } `json:"agentInfo"`
		} `json:"initialize"`
		SessionID string `json:"sessionId"`
		Modes     struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
		First        struct{ StopReason string } `json:"first"`
		FirstUpdates int                         `json:"firstUpdates"`
		Background   struct{ StopReason string } `json:"background"`
		Notified     bool                        `json:"notified"`
		Second       struct{ StopReason string } `json:"second"`
		CancelSent   bool                        `json:"cancelSent"`
		Echo         struct{ StopReason string } `json:"echo"`
	} `json:"steps"`
	Report acpConnection `json:"report"`
	Loaded acpConnection `json:"loaded"`
}

func TestACPSubagentPermissionCancelLoadAndMCP(t *testing.T) {
	modules := npm.Modules(t, "@agentclientprotocol/sdk")
	everything := npm.Bin(t, "mcp-server-everything", "@modelcontextprotocol/server-everything")
	e, _ := anthropicEnv(t, acpModel)
	e.write(".claude/agents/acp-reviewer.md", acpReviewerFile)
	e.write(".cadre/settings.json", `{"model": "`+sonnet+`"}`)
	driver, err := filepath.Abs(filepath.Join("testdata", "acp_driver.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", driver, modules, bin, e.dir, everything)
	cmd.Dir, cmd.Env = e.dir, e.vars
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the ACP driver failed: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	var r acpReport
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("driver report: %v\n%s", err, stdout.String())
	}
	for name, c := range map[string]acpConnection{"first": r.Report, "load": r.Loaded} {
		if c.Exit.Code == nil || *c.Exit.Code != 0 {
			t.Errorf("the %s `cadre acp` ended with %+v; stderr:\n%s", name, c.Exit, c.Stderr)
		}
	}
	caps := r.Steps.Initialize.AgentCapabilities
	if !caps.LoadSession || !caps.PromptCapabilities.EmbeddedContext || r.Steps.Initialize.AgentInfo.Name != "cadre" {
		t.Errorf("initialize = %+v", r.Steps.Initialize)
	}
	if r.Steps.Modes.CurrentModeID != "default" {
		t.Errorf("session/new modes = %+v, want the current mode default", r.Steps.Modes)
	}

	// The first prompt: the subagent's run is the Agent call, its Bash call
	// a call of its own tagged with it; the client allowed that call and it
	// ran; both agents' progress streamed.
	if r.Steps.First.StopReason != "end_turn" {
		t.Errorf("first prompt stopped with %q, want end_turn", r.Steps.First.StopReason)
	}
	first := r.Report.Updates[:r.Steps.FirstUpdates]
	find := func(ups []acpUpdate, kind, id string, ok func(acpUpdate) bool) bool {
		for _, u := range ups {
			if u.SessionUpdate == kind && u.ToolCallID == id && (ok == nil || ok(u)) {
				return true
			}
		}
		return false
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"the Agent call, titled with the subagent", find(first, "tool_call", "toolu_acp_agent", func(u acpUpdate) bool {
			return u.Kind == "think" && strings.Contains(u.Title, "acp-reviewer")
		})},
		{"the Agent call running", find(first, "tool_call_update", "toolu_acp_agent", func(u acpUpdate) bool { return u.Status == "in_progress" })},
		{"the subagent's Bash call, tagged with its Agent call", find(first, "tool_call", "toolu_acp_child_bash", func(u acpUpdate) bool {
			return u.Meta.Cadre.ParentToolCallID == "toolu_acp_agent" && strings.HasPrefix(u.Title, "acp-reviewer: ") && u.Kind == "execute"
		})},
		{"the subagent's text in the Agent call's progress", find(first, "tool_call_update", "toolu_acp_agent", func(u acpUpdate) bool {
			return strings.Contains(u.text(), "I will record the review.")
		})},
		{"the subagent's Bash call completed", find(first, "tool_call_update", "toolu_acp_child_bash", func(u acpUpdate) bool { return u.Status == "completed" })},
		{"the Agent call completed with the subagent's result", find(first, "tool_call_update", "toolu_acp_agent", func(u acpUpdate) bool {
			return u.Status == "completed" && strings.Contains(u.text(), "Reviewed: the notes hold the secret word.")
		})},
		{"the main agent's answer", find(first, "agent_message_chunk", "", func(u acpUpdate) bool { return strings.Contains(u.text(), "The reviewer is done.") })},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("the first prompt's updates lack %s:%s", c.what, dumpUpdates(first))
		}
	}
	if len(r.Report.PermissionRequests) == 0 {
		t.Fatalf("no permission was asked; updates: %s", dumpUpdates(first))
	}
	p := r.Report.PermissionRequests[0]
	var options []string
	for _, o := range p.Options {
		options = append(options, o.OptionID+"="+o.Kind)
	}
	if p.ToolCall.ToolCallID != "toolu_acp_child_bash" || !strings.HasPrefix(p.ToolCall.Title, "acp-reviewer: ") ||
		strings.Join(options, ",") != "allow=allow_once,allow_always=allow_always,reject=reject_once" {
		t.Errorf("permission request = %+v, options %v", p, options)
	}
	if b, err := os.ReadFile(filepath.Join(e.dir, "reviewed.txt")); err != nil || strings.TrimSpace(string(b)) != "reviewed" {
		t.Errorf("the allowed Bash call did not run: %q, %v", b, err)
	}

	// The background subagent: its Agent call stays running after the
	// prompt, and the notification turn streams outside any prompt.
	if r.Steps.Background.StopReason != "end_turn" || !r.Steps.Notified {
		t.Errorf("background prompt stopped with %q; notification turn streamed: %v", r.Steps.Background.StopReason, r.Steps.Notified)
	}
	if !find(r.Report.Updates, "tool_call_update", "toolu_acp_bg", func(u acpUpdate) bool {
		return u.Status == "completed" && strings.Contains(u.text(), "Background check done.")
	}) {
		t.Errorf("the background Agent call did not complete with its result; updates: %s", dumpUpdates(r.Report.Updates))
	}

	// The cancelled prompt: its Bash call was allowed, seen running, then
	// cancelled: the prompt ends "cancelled" and the call failed.
	if !r.Steps.CancelSent || r.Steps.Second.StopReason != "cancelled" {
		t.Errorf("second prompt: cancel sent %v, stopped with %q, want cancelled", r.Steps.CancelSent, r.Steps.Second.StopReason)
	}
	if !find(r.Report.Updates, "tool_call_update", "toolu_acp_sleep", func(u acpUpdate) bool { return u.Status == "failed" }) {
		t.Errorf("the cancelled Bash call did not fail; updates: %s", dumpUpdates(r.Report.Updates[r.Steps.FirstUpdates:]))
	}

	// session/load in a new process replays the history.
	loaded := r.Loaded.Updates
	if !find(loaded, "user_message_chunk", "", func(u acpUpdate) bool { return strings.Contains(u.text(), "Review the notes") }) ||
		!find(loaded, "tool_call", "toolu_acp_agent", nil) ||
		!find(loaded, "agent_message_chunk", "", func(u acpUpdate) bool { return strings.Contains(u.text(), "The reviewer is done.") }) {
		t.Errorf("session/load replayed %s", dumpUpdates(loaded))
	}

	// The MCP server the editor gave the loaded session: its echo tool ran.
	if r.Steps.Echo.StopReason != "end_turn" || !find(loaded, "tool_call_update", "toolu_acp_echo", func(u acpUpdate) bool {
		return u.Status == "completed" && strings.Contains(u.text(), "Echo: hello over ACP")
	}) {
		t.Errorf("the MCP echo prompt stopped with %q; updates: %s\nstderr: %s", r.Steps.Echo.StopReason, dumpUpdates(loaded), r.Loaded.Stderr)
	}
}
