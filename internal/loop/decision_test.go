package loop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// changing approves every call with input instead of the model's.
type changing struct{ input json.RawMessage }

func (c changing) PermitInput(context.Context, string, tool.Tool, tool.Env, json.RawMessage) (json.RawMessage, error) {
	return c.input, nil
}

// interrupting refuses every call and ends the turn.
type interrupting struct{}

type stopDenial struct{}

func (stopDenial) Error() string    { return "refused, and stop" }
func (stopDenial) Interrupts() bool { return true }

func (interrupting) PermitInput(context.Context, string, tool.Tool, tool.Env, json.RawMessage) (json.RawMessage, error) {
	return nil, stopDenial{}
}

func TestAChangedInputRunsAndIsShown(t *testing.T) {
	var steps []Step
	out, err := Run(context.Background(), Config{
		Model:  scripted(llm.Reply(use("u1", "echo", `{"text":"model's"}`)), llm.Reply(llm.Text("done"))),
		Tools:  set(t, echo("echo", false, nil)),
		Permit: changing{json.RawMessage(`{"text":"approver's"}`)},
		OnStep: func(_ context.Context, s Step) error { steps = append(steps, s); return nil },
	}, []llm.Message{llm.UserText("go")})
	if err != nil {
		t.Fatal(err)
	}
	if got := steps[1].Message.Content[0].ResultText(); got != "echo:approver's" {
		t.Errorf("the tool ran with %q", got)
	}
	if got := string(steps[1].Inputs["u1"]); got != `{"text":"approver's"}` {
		t.Errorf("the step shows the input %q", got)
	}
	// The history the model sees next shows what ran.
	if got := string(out.Messages[1].Content[0].Input); got != `{"text":"approver's"}` {
		t.Errorf("the history's tool_use input is %q", got)
	}
}

// Attack: an approver's input that the tool's schema rejects is an error
// result for that call, never a crash or a call with bad input.
func TestAnInvalidChangedInputIsAnErrorResult(t *testing.T) {
	for _, bad := range []string{`{"text": 42}`, `not json`, `{"text":"x"`} {
		ran := false
		out, err := Run(context.Background(), Config{
			Model:  scripted(llm.Reply(use("u1", "echo", `{"text":"fine"}`)), llm.Reply(llm.Text("done"))),
			Tools:  set(t, echo("echo", false, func(context.Context, echoIn) error { ran = true; return nil })),
			Permit: changing{json.RawMessage(bad)},
		}, []llm.Message{llm.UserText("go")})
		if err != nil {
			t.Fatalf("%s: %v", bad, err)
		}
		res := out.Messages[2].Content[0]
		if ran || !res.IsError || !strings.Contains(res.ResultText(), "InputValidationError") {
			t.Errorf("%s: ran %v, result %+v", bad, ran, res)
		}
	}
}

func TestAnInterruptingDenialEndsTheTurn(t *testing.T) {
	var steps []Step
	out, err := Run(context.Background(), Config{
		Model:  scripted(llm.Reply(use("u1", "echo", `{"text":"a"}`), use("u2", "echo", `{"text":"b"}`)), llm.Reply(llm.Text("never"))),
		Tools:  set(t, echo("echo", false, nil)),
		Permit: interrupting{},
		OnStep: func(_ context.Context, s Step) error { steps = append(steps, s); return nil },
	}, []llm.Message{llm.UserText("go")})
	if !errors.Is(err, ErrInterrupted) || out.Turns != 1 {
		t.Fatalf("err %v after %d model calls", err, out.Turns)
	}
	// The denial is recorded; the call after it did not run.
	if len(steps) != 2 || len(steps[1].Denials) != 1 || !strings.Contains(steps[1].Message.Content[1].ResultText(), "Interrupted") {
		t.Errorf("steps %+v", steps)
	}
}
