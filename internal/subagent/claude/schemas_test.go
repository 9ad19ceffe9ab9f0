package claude

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
	"github.com/cadre-dev/cadre/tool"
)

// inferredSchema encodes the schema inferred from In, as tool.Typed would.
func inferredSchema[In any](t *testing.T) []byte {
	t.Helper()
	s, err := jsonschema.For[In](nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestSchemasAreTheInputTypes keeps the embedded schemas (schemas/*.json)
// the ones their input types infer, and the tools offering them. After
// changing AgentInput or a task tool's input type, run the test with
// -update.
func TestSchemasAreTheInputTypes(t *testing.T) {
	inferred := map[string][]byte{
		"agent":        inferredSchema[AgentInput](t),
		"send_message": inferredSchema[SendMessageInput](t), "task_output": inferredSchema[TaskOutputInput](t),
		"task_stop": inferredSchema[TaskStopInput](t), "task_list": inferredSchema[TaskListInput](t),
	}
	for name, raw := range inferred {
		golden.Check(t, filepath.Join("schemas", name+".json"), raw)
	}
	svc, err := subagent.New(subagent.Config{Agents: agent.Load(agent.LoadOptions{Cwd: t.TempDir()})})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	p := New(svc).(*profile)
	offered := map[string]tool.Tool{"agent": p.agentTool(subagent.Caller{})}
	for _, tl := range p.taskTools(subagent.Caller{}) {
		offered[map[string]string{"SendMessage": "send_message", "TaskOutput": "task_output", "TaskStop": "task_stop", "TaskList": "task_list"}[tl.Info().Name]] = tl
	}
	for name, want := range inferred {
		tl := offered[name]
		if tl == nil {
			t.Errorf("no %s tool offered", name)
			continue
		}
		if got := tl.Info().InputSchema; string(got) != string(want) {
			t.Errorf("the %s tool offers schema %s, want the one its input type infers, %s (run with -update)", name, got, want)
		}
	}
}

// The team's schemas: ListAgents in Claude Code 2.1.330's shape
// (protocol/claude-tools/ListAgents.json), and the lead's Agent with
// team_name beside every property of the plain one.
func TestTeamSchemas(t *testing.T) {
	var la struct {
		Properties           map[string]map[string]any `json:"properties"`
		AdditionalProperties *bool                     `json:"additionalProperties"`
		Required             []string                  `json:"required"`
	}
	if err := json.Unmarshal(schema("list_agents"), &la); err != nil {
		t.Fatal(err)
	}
	if len(la.Properties) != 3 || la.AdditionalProperties == nil || *la.AdditionalProperties || len(la.Required) != 0 {
		t.Errorf("ListAgents schema: %s", schema("list_agents"))
	}
	for _, p := range []string{"channel", "q", "cursor"} {
		if la.Properties[p]["type"] != "string" || la.Properties[p]["maxLength"] != 256.0 {
			t.Errorf("ListAgents.%s: %v", p, la.Properties[p])
		}
	}
	var plain, team struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	if err := json.Unmarshal(schema("agent"), &plain); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(teamAgentSchema(), &team); err != nil {
		t.Fatal(err)
	}
	for p := range plain.Properties {
		if team.Properties[p] == nil {
			t.Errorf("the lead's Agent lacks %s", p)
		}
	}
	if team.Properties["team_name"] == nil || team.Properties["mode"] == nil || len(team.Properties) != len(plain.Properties)+2 || strings.Join(team.Required, ",") != strings.Join(plain.Required, ",") {
		t.Errorf("the lead's Agent schema: %s", teamAgentSchema())
	}
}
