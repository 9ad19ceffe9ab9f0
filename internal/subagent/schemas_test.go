package subagent

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

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

// TestSchemasAreTheInputTypes keeps the spawn tools' embedded schemas
// (schemas/*.json) the ones their input types infer, and the tools
// offering them. After changing AgentInput or TaskInput, run the test with
// -update.
func TestSchemasAreTheInputTypes(t *testing.T) {
	agent, task := inferredSchema[AgentInput](t), inferredSchema[TaskInput](t)
	golden.Check(t, filepath.Join("schemas", "agent.json"), agent)
	golden.Check(t, filepath.Join("schemas", "task.json"), task)
	h := newHarness(t, setup{})
	for name, tc := range map[string]struct {
		tool tool.Tool
		want []byte
	}{"agent": {h.svc.protos.agent, agent}, "task": {h.svc.protos.task, task}} {
		if got := tc.tool.Info().InputSchema; string(got) != string(tc.want) {
			t.Errorf("the %s tool offers schema %s, want the one its input type infers, %s (run with -update)", name, got, tc.want)
		}
	}
}
