package builtin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/tool"
)

func TestTodoWriteKeepsAListPerSession(t *testing.T) {
	tw := TodoWrite(Options{})
	call := func(session, in string) tool.Result {
		t.Helper()
		if err := tw.(tool.Validating).ValidateInput(json.RawMessage(in)); err != nil {
			return tool.Errorf("%v", err)
		}
		res, err := tw.Call(context.Background(), tool.Env{SessionID: session}, json.RawMessage(in))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := []Todo{{"Read the code", TodoCompleted, "Reading the code"}, {"Write tests", TodoInProgress, "Writing tests"}}
	in, _ := json.Marshal(TodoWriteInput{Todos: first})
	res := call("s1", string(in))
	if diff := cmp.Diff(TodoMeta{OldTodos: []Todo{}, NewTodos: first}, res.Meta); res.IsError || diff != "" {
		t.Fatalf("first call: error %v, meta (-want +got):\n%s", res.IsError, diff)
	}
	second := []Todo{{"Read the code", TodoCompleted, "Reading the code"}, {"Write tests", TodoCompleted, "Writing tests"}}
	in, _ = json.Marshal(TodoWriteInput{Todos: second})
	res = call("s1", string(in))
	if diff := cmp.Diff(TodoMeta{OldTodos: first, NewTodos: second}, res.Meta); diff != "" {
		t.Errorf("second call meta (-want +got):\n%s", diff)
	}
	if m := call("s2", `{"todos":[]}`).Meta.(TodoMeta); len(m.OldTodos) != 0 {
		t.Errorf("another session saw this one's list: %v", m.OldTodos)
	}
	for _, bad := range []string{
		`{"todos":[{"content":"x","status":"done","activeForm":"x"}]}`,
		`{"todos":[{"content":"","status":"pending","activeForm":"x"}]}`,
		`{"todos":[{"content":"x","status":"pending"}]}`,
	} {
		if res := call("s3", bad); !res.IsError {
			t.Errorf("%s was accepted", bad)
		}
	}
}
