package hook

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/hook"
)

// TestGoHookGetsTheWholeInput: a Go hook is told what a command hook is
// told — the team events' task and teammate fields too, which the SDK's
// own copy of the input once lacked — and Raw is the JSON a command reads.
func TestGoHookGetsTheWholeInput(t *testing.T) {
	var got hook.Input
	cfg, err := FromFuncs(map[Event][]hook.Matcher{TaskCompleted: {{Hooks: []hook.Func{func(_ context.Context, in hook.Input) (hook.Output, error) {
		got = in
		return hook.Output{}, nil
	}}}}})
	if err != nil {
		t.Fatal(err)
	}
	in := Input{Event: TaskCompleted, SessionID: "S", AgentID: "A", TaskID: "7", TaskSubject: "Write the parser", TeammateName: "alice", TeamName: "S"}
	engine(t, cfg).Run(context.Background(), in)
	if got.TaskID != "7" || got.TaskSubject != "Write the parser" || got.TeammateName != "alice" || got.TeamName != "S" || got.Event != TaskCompleted {
		t.Fatalf("the Go hook got %+v", got)
	}
	want, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Raw) != string(want) {
		t.Fatalf("Raw = %s, want the command's input %s", got.Raw, want)
	}
	if got.CustomInstructions != nil {
		t.Fatalf("CustomInstructions = %q, want nil (null) outside a manual compaction", *got.CustomInstructions)
	}
}
