package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit"
	"github.com/cadre-dev/cadre/internal/testkit/npm"
)

// The samples under testdata/claude-code are what Claude Code 2.1.330
// itself wrote on its hooks' standard input, recorded offline against the
// fake Anthropic server by TestRecordClaudeCodeHookInputs (run it with
// CADRE_RECORD_CLAUDE_HOOKS=1 to record them again).

// TestInputsHaveClaudeCodesFields compares, event by event, the fields of
// cadre's inputs with those of Claude Code's recorded samples.
func TestInputsHaveClaudeCodesFields(t *testing.T) {
	// Fields Claude Code sends that cadre does not (docs/hooks.md says why).
	absent := map[string]bool{"prompt_id": true, "effort": true, "background_tasks": true, "session_crons": true,
		"mcp_server": true, "duration_ms": true, "source": true, "session_title": true, "seconds_since_last_response": true,
		"context_tokens": true, "prompt_cache_likely_expired": true, "estimated_cache_write_usd": true}
	samples, _ := filepath.Glob(filepath.Join("testdata", "claude-code", "*.json"))
	if len(samples) == 0 {
		t.Fatal("no recorded samples in testdata/claude-code")
	}
	for _, path := range samples {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var theirs map[string]any
		if err := json.Unmarshal(b, &theirs); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ev := Event(theirs["hook_event_name"].(string))
		in := Input{Event: ev, SessionID: "s", TranscriptPath: "t", Cwd: "c", PermissionMode: "default"}
		if _, ok := theirs["agent_id"]; ok {
			in.AgentID, in.AgentType = "a", "t"
		}
		// What cadre sets for the event when it fires it.
		switch ev {
		case PreToolUse, PostToolUse:
			in.ToolName, in.ToolInput, in.ToolUseID = "Bash", json.RawMessage(`{}`), "x"
			if ev == PostToolUse {
				in.ToolResponse = json.RawMessage(`{}`)
			}
		case UserPromptSubmit:
			in.Prompt = "p"
		case Stop, SubagentStop:
			in.LastAssistantMessage = "m"
			if ev == SubagentStop {
				in.AgentTranscriptPath = "t"
			}
		case SessionStart:
			in.Source, in.Model = "startup", "m"
		case SessionEnd:
			in.Reason = "other"
		case PreCompact:
			in.Trigger = "auto"
		case Notification:
			in.Message, in.NotificationType = "m", "permission_prompt"
		}
		mine, _ := json.Marshal(in)
		var ours map[string]any
		json.Unmarshal(mine, &ours)
		for k := range theirs {
			if _, ok := ours[k]; !ok && !absent[k] && !(k == "source" && ev == SessionStart) {
				t.Errorf("%s: Claude Code sends %q, cadre does not", filepath.Base(path), k)
			}
		}
		for k := range ours {
			if _, ok := theirs[k]; !ok && !(ev == SessionStart && k == "model") {
				t.Errorf("%s: cadre sends %q, Claude Code does not", filepath.Base(path), k)
			}
		}
		// And in the same order.
		both := func(b []byte, other map[string]any) []string {
			var out []string
			for _, k := range keyOrder(t, b) {
				if _, ok := other[k]; ok {
					out = append(out, k)
				}
			}
			return out
		}
		if a, b := both(b, ours), both(mine, theirs); !slices.Equal(a, b) {
			t.Errorf("%s: Claude Code's order %v, cadre's %v", filepath.Base(path), a, b)
		}
	}
}

// keyOrder lists the keys of a JSON object in the order they appear.
func keyOrder(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

var recordIDs = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|toolu_[A-Za-z0-9]+|a[0-9a-f]{16}`)

// TestRecordClaudeCodeHookInputs runs Claude Code with a hook on every
// event that cadre fires, each saving its standard input, and keeps one
// sample per event (ids and folders normalised) under testdata/claude-code.
func TestRecordClaudeCodeHookInputs(t *testing.T) {
	if os.Getenv("CADRE_RECORD_CLAUDE_HOOKS") == "" {
		t.Skip("records Claude Code's hook inputs again only with CADRE_RECORD_CLAUDE_HOOKS=1 (needs testdata/npm installed)")
	}
	claude := npm.Bin(t, "claude", "@anthropic-ai/claude-code")
	dir, home := t.TempDir(), t.TempDir()
	rec := filepath.Join(dir, "rec")
	os.MkdirAll(rec, 0o755)
	os.MkdirAll(filepath.Join(dir, ".claude", "agents"), 0o755)
	os.WriteFile(filepath.Join(dir, ".claude", "agents", "reviewer.md"), []byte("---\nname: reviewer\ndescription: Reviews code.\ntools: Read\n---\nREVIEWER-PROMPT: review.\n"), 0o644)
	hooks := map[string]any{}
	for _, ev := range Events() {
		hooks[string(ev)] = []any{map[string]any{"matcher": "", "hooks": []any{map[string]any{"type": "command",
			"command": fmt.Sprintf(`cat > "%s/%s-$(date +%%s%%N).json"`, rec, ev)}}}}
	}
	settings, _ := json.Marshal(map[string]any{"hooks": hooks})
	os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), settings, 0o644)
	srv := testkit.NewAnthropic(t, func(req testkit.Request) testkit.Reply {
		body := string(req.Body)
		switch {
		case !strings.Contains(body, `"tools"`):
			return testkit.Reply{Text: "ok"}
		case strings.Contains(body, "REVIEWER-PROMPT"):
			return testkit.Reply{Text: "REVIEW DONE"}
		}
		switch strings.Count(body, `"tool_result"`) {
		case 0:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_01", Name: "Bash", Input: map[string]any{"command": "echo hi", "description": "say hi"}}}}
		case 1:
			return testkit.Reply{ToolCalls: []testkit.ToolCall{{ID: "toolu_02", Name: "Agent", Input: map[string]any{"description": "review", "prompt": "Review it", "subagent_type": "reviewer"}}}}
		}
		return testkit.Reply{Text: "all done"}
	})
	cmd := exec.CommandContext(t.Context(), claude, "-p", "say hi then review", "--allowedTools", "Bash,Agent,Task", "--output-format", "json")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1"}
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(rec, "*.json"))
	slices.Sort(files)
	kept := map[string]bool{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		var m map[string]any
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		name := m["hook_event_name"].(string)
		if m["agent_id"] != nil && (name == "PreToolUse" || name == "PostToolUse") {
			name = "Subagent" + name
		}
		if kept[name] {
			continue
		}
		kept[name] = true
		s := strings.ReplaceAll(string(b), home, "$HOME")
		s = strings.ReplaceAll(s, dir, "$PROJECT")
		seen := map[string]string{}
		s = recordIDs.ReplaceAllStringFunc(s, func(id string) string {
			if _, ok := seen[id]; !ok {
				seen[id] = fmt.Sprintf("<id-%d>", len(seen)+1)
			}
			return seen[id]
		})
		os.MkdirAll(filepath.Join("testdata", "claude-code"), 0o755)
		if err := os.WriteFile(filepath.Join("testdata", "claude-code", name+".json"), []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("recorded %d events: %v\n%s", len(kept), kept, out)
}
