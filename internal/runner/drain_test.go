package runner_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/llm"
)

// feed is a Pending that hands out its inputs one by one, then nothing.
type feed struct{ inputs [][]llm.Message }

func (f *feed) Next(context.Context) []llm.Message {
	if len(f.inputs) == 0 {
		return nil
	}
	next := f.inputs[0]
	f.inputs = f.inputs[1:]
	return next
}

// TestDrain (S-Q2): a conversation answers its input, then each input
// pending brings, one turn each, until pending has nothing more or a turn
// fails.
func TestDrain(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name    string
		pending runner.Pending
		failOn  string // the input whose turn fails
		want    []string
	}{
		{"no pending", nil, "", []string{"first"}},
		{"two notifications", &feed{inputs: [][]llm.Message{{llm.UserText("n1")}, {llm.UserText("n2")}}}, "", []string{"first", "n1", "n2"}},
		{"a failed turn ends it", &feed{inputs: [][]llm.Message{{llm.UserText("n1")}, {llm.UserText("n2")}}}, "n1", []string{"first", "n1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, sess := newSession(t)
			var answered []string
			m := &llm.ModelFunc{ID: "m", Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
				last := req.Messages[len(req.Messages)-1].Text()
				answered = append(answered, last)
				if last == tt.failOn {
					return nil, boom
				}
				return llm.Reply(llm.Text("re " + last)), nil
			}}
			conv := runner.Start(runner.Spec{Session: sess, Loop: runner.LoopConfig(runner.Agent{Name: "main", Model: m})}, nil)
			turns := 0
			last := conv.Drain(t.Context(), []llm.Message{llm.UserText("first")}, tt.pending, func(*runner.Result) { turns++ })
			if err := conv.Close(""); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, answered); d != "" || turns != len(tt.want) {
				t.Errorf("%d turns, answering (-want +got):\n%s", turns, d)
			}
			if tt.failOn != "" && !errors.Is(last.Err, boom) {
				t.Errorf("last result's error = %v, want the failed turn's", last.Err)
			}
		})
	}
}
