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

// TestSchemasAreTheInputTypes keeps the embedded schemas (schemas/*.json)
// the ones their input types infer, and the tools offering them. After
// changing AgentInput, TaskInput or a task tool's input type, run the test
// with -update.
func TestSchemasAreTheInputTypes(t *testing.T) {
	inferred := map[string][]byte{
		"agent": inferredSchema[AgentInput](t), "task": inferredSchema[TaskInput](t),
		"send_message": inferredSchema[SendMessageInput](t), "task_output": inferredSchema[TaskOutputInput](t),
		"task_stop": inferredSchema[TaskStopInput](t), "task_list": inferredSchema[TaskListInput](t),
	}
	for name, raw := range inferred {
		golden.Check(t, filepath.Join("schemas", name+".json"), raw)
	}
	h := newHarness(t, setup{})
	offered := map[string]tool.Tool{"agent": h.svc.protos.agent, "task": h.svc.protos.task}
	for _, tl := range h.svc.taskTools(Caller{}) {
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
