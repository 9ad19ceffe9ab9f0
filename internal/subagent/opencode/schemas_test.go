package opencode

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cadre-dev/cadre/internal/agent"
	"github.com/cadre-dev/cadre/internal/subagent"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
)

// TestSchemasAreTheInputTypes keeps the embedded schema (schemas/task.json)
// the one TaskInput infers, and the task tool offering it. After changing
// TaskInput, run the test with -update.
func TestSchemasAreTheInputTypes(t *testing.T) {
	s, err := jsonschema.For[TaskInput](nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("schemas", "task.json"), want)
	svc, err := subagent.New(subagent.Config{Agents: agent.Load(agent.LoadOptions{Cwd: t.TempDir()})})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	tl := New(svc).(*profile).taskTool(subagent.Caller{})
	if got := tl.Info().InputSchema; string(got) != string(want) {
		t.Errorf("the task tool offers schema %s, want the one TaskInput infers, %s (run with -update)", got, want)
	}
}
