package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/internal/testkit/npm"
)

// sdkTypesFile holds, for the Agent SDK's message types that cadre writes,
// the fields each type requires and the values of the string unions cadre
// fills, read from the SDK's sdk.d.ts (and BetaUsage from the Anthropic
// SDK it depends on). TestSDKTypesAreCurrent derives it again when the npm
// packages are installed, so it cannot drift from the pinned SDK;
// TestLinesHaveSDKRequiredFields checks cadre's lines against it always.
const sdkTypesFile = "testdata/sdk-types.json"

type sdkTypes struct {
	// Required maps a type name to its required (non-optional) fields.
	Required map[string][]string `json:"required"`
	// Unions maps a string-union type name to its values.
	Unions map[string][]string `json:"unions"`
}

// sdkMessageTypes are the SDK types of the lines cadre writes, and the
// nested types whose fields the SDK reads.
var sdkMessageTypes = []string{
	"SDKSystemMessage", "SDKAssistantMessage", "SDKUserMessage", "SDKResultSuccess", "SDKResultError",
	"SDKTaskStartedMessage", "SDKTaskProgressMessage", "SDKTaskNotificationMessage",
	"SDKTaskUpdatedMessage", "SDKBackgroundTasksChangedMessage",
	"SDKPartialAssistantMessage", "SDKPermissionDenial", "ModelUsage",
}

func TestSDKTypesAreCurrent(t *testing.T) {
	modules := npm.Modules(t, "@anthropic-ai/claude-agent-sdk", "@anthropic-ai/sdk")
	sdk := readFile(t, filepath.Join(modules, "@anthropic-ai/claude-agent-sdk/sdk.d.ts"))
	api := readFile(t, filepath.Join(modules, "@anthropic-ai/sdk/resources/beta/messages/messages.d.ts"))
	out := sdkTypes{Required: map[string][]string{}, Unions: map[string][]string{}}
	for _, name := range sdkMessageTypes {
		out.Required[name] = requiredFields(t, sdk, "export declare type "+name+" = {")
	}
	out.Required["BetaUsage"] = requiredFields(t, api, "export interface BetaUsage {")
	for _, name := range []string{"ApiKeySource", "PermissionMode"} {
		out.Unions[name] = unionValues(t, sdk, name)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, sdkTypesFile, append(b, '\n'))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var fieldRE = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)(\??):`)

// requiredFields reads the top-level fields of the type declared at the
// line opening with decl that have no "?", skipping comments.
func requiredFields(t *testing.T, src, decl string) []string {
	t.Helper()
	i := strings.Index(src, "\n"+decl)
	if i < 0 {
		t.Fatalf("sdk.d.ts declares no %q", decl)
	}
	sc := bufio.NewScanner(strings.NewReader(src[i+1+len(decl):]))
	sc.Buffer(nil, 1<<20)
	depth, comment := 1, false
	var out []string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case comment:
			comment = !strings.Contains(line, "*/")
			continue
		case strings.HasPrefix(line, "/*"):
			comment = !strings.Contains(line, "*/")
			continue
		case strings.HasPrefix(line, "//"):
			continue
		}
		if depth == 1 {
			if m := fieldRE.FindStringSubmatch(line); m != nil && m[2] == "" {
				out = append(out, m[1])
			}
		}
		depth += strings.Count(line, "{") - strings.Count(line, "}")
		if depth <= 0 {
			break
		}
	}
	slices.Sort(out)
	return out
}

var quotedRE = regexp.MustCompile(`'([^']*)'`)

func unionValues(t *testing.T, src, name string) []string {
	t.Helper()
	decl := "export declare type " + name + " = "
	i := strings.Index(src, decl)
	if i < 0 {
		t.Fatalf("sdk.d.ts declares no %s", name)
	}
	line, _, _ := strings.Cut(src[i+len(decl):], ";")
	var out []string
	for _, m := range quotedRE.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	return out
}

// sdkLines is one line of every kind cadre writes for the SDK: the fixed
// conversation, a subagent's task lines, a partial message and an error
// result.
func sdkLines(t *testing.T) []map[string]any {
	t.Helper()
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	evs := run()
	evs = append(evs,
		cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskStarted, SessionID: "s", UUID: "t-1", Time: at,
			Task: &cadre.TaskEvent{TaskID: "a1", ToolUseID: "toolu_9", Description: "d", AgentType: "general-purpose", Prompt: "p", SpawnDepth: 1, Kind: cadre.TaskLocalAgent}},
		cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskProgress, SessionID: "s", UUID: "t-2", Time: at,
			Task: &cadre.TaskEvent{TaskID: "a1", ToolUseID: "toolu_9", Description: "d", Usage: &cadre.TaskUsage{}}},
		cadre.Event{Type: cadre.EventSystem, Subtype: cadre.SubtypeTaskNotification, SessionID: "s", UUID: "t-3", Time: at,
			Task: &cadre.TaskEvent{TaskID: "a1", ToolUseID: "toolu_9", Status: cadre.TaskCompleted, Summary: "done", Usage: &cadre.TaskUsage{}}},
		cadre.Event{Type: cadre.EventStreamEvent, SessionID: "s", UUID: "p-1", Time: at,
			Partial: map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": "he"}}},
		cadre.Event{Type: cadre.EventResult, Subtype: cadre.ResultDuringExecution, SessionID: "s", UUID: "r-2", Time: at,
			Result: &cadre.ResultInfo{IsError: true, Errors: []string{"resume x: not found"}}},
	)
	var buf bytes.Buffer
	w := New(&buf, StreamJSON, true)
	for _, e := range evs {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line does not parse: %v: %s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// sdkTypeOf names the SDK type a line must satisfy.
func sdkTypeOf(m map[string]any) string {
	switch m["type"] {
	case "assistant":
		return "SDKAssistantMessage"
	case "user":
		return "SDKUserMessage"
	case "stream_event":
		return "SDKPartialAssistantMessage"
	case "result":
		if m["subtype"] == "success" {
			return "SDKResultSuccess"
		}
		return "SDKResultError"
	case "system":
		return map[any]string{
			"init": "SDKSystemMessage", "task_started": "SDKTaskStartedMessage",
			"task_progress": "SDKTaskProgressMessage", "task_notification": "SDKTaskNotificationMessage",
			"task_updated": "SDKTaskUpdatedMessage", "background_tasks_changed": "SDKBackgroundTasksChangedMessage",
		}[m["subtype"]]
	}
	return ""
}

func TestLinesHaveSDKRequiredFields(t *testing.T) {
	var types sdkTypes
	if err := json.Unmarshal([]byte(readFile(t, sdkTypesFile)), &types); err != nil {
		t.Fatal(err)
	}
	need := func(what string, m map[string]any, typ string) {
		t.Helper()
		keys := types.Required[typ]
		if len(keys) == 0 {
			t.Fatalf("%s lists no fields of %s", sdkTypesFile, typ)
		}
		for _, k := range keys {
			if _, ok := m[k]; !ok {
				t.Errorf("%s lacks %q, which the SDK's %s requires", what, k, typ)
			} else if m[k] == nil && typ == "BetaUsage" && k != "fallback_credit" {
				t.Errorf("%s has %q null; the SDK's NonNullableUsage forbids it", what, k)
			}
		}
	}
	seen := map[string]bool{}
	for _, m := range sdkLines(t) {
		typ := sdkTypeOf(m)
		if typ == "" {
			t.Errorf("line of no SDK type: %v", m)
			continue
		}
		seen[typ] = true
		what := typ + " line"
		need(what, m, typ)
		switch typ {
		case "SDKSystemMessage":
			for field, union := range map[string]string{"apiKeySource": "ApiKeySource", "permissionMode": "PermissionMode"} {
				if v, _ := m[field].(string); !slices.Contains(types.Unions[union], v) {
					t.Errorf("init %s = %q, not one of the SDK's %v", field, v, types.Unions[union])
				}
			}
		case "SDKResultSuccess", "SDKResultError":
			need(what+" usage", m["usage"].(map[string]any), "BetaUsage")
			for name, u := range m["modelUsage"].(map[string]any) {
				need(what+" modelUsage["+name+"]", u.(map[string]any), "ModelUsage")
			}
			if _, ok := m["result"]; ok && typ == "SDKResultError" {
				t.Errorf("an error result has a result field: %v", m)
			}
		}
	}
	for _, typ := range []string{"SDKSystemMessage", "SDKAssistantMessage", "SDKUserMessage", "SDKResultSuccess", "SDKResultError", "SDKPartialAssistantMessage",
		"SDKTaskStartedMessage", "SDKTaskProgressMessage", "SDKTaskNotificationMessage"} {
		if !seen[typ] {
			t.Errorf("no %s line was checked", typ)
		}
	}
}

// TestModelNamesAsClaudeCode: an Anthropic model is named by its bare id,
// as Claude Code names it, in the init line and in modelUsage.
func TestModelNamesAsClaudeCode(t *testing.T) {
	for _, m := range sdkLines(t) {
		switch sdkTypeOf(m) {
		case "SDKSystemMessage":
			if m["model"] != "claude-sonnet-5-5" {
				t.Errorf("init model %v", m["model"])
			}
			if m["claude_code_version"] != m["cadre_version"] || m["claude_code_version"] == "" {
				t.Errorf("init versions %v %v", m["claude_code_version"], m["cadre_version"])
			}
		case "SDKResultSuccess":
			mu := m["modelUsage"].(map[string]any)
			if _, ok := mu["claude-sonnet-5-5"]; !ok || len(mu) != 1 {
				t.Errorf("modelUsage keys %v", mu)
			}
		}
	}
}

func TestKeySourceInSDKSet(t *testing.T) {
	for in, want := range map[string]string{"": "none", "none": "none", "ANTHROPIC_API_KEY": "ANTHROPIC_API_KEY", "OPENAI_API_KEY": "user"} {
		if got := sdkKeySource(in); got != want {
			t.Errorf("sdkKeySource(%q) = %q, want %q", in, got, want)
		}
	}
}
