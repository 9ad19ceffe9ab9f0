package replay

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// ReadOnly wraps every tool of tools that does more than read files, so
// that it answers with the recorded result of the call instead of running:
// what a replay with --tools read-only does. Read tools, and the tools that
// start subagents, run as usual.
func ReadOnly(rec *Recording, tools []tool.Tool) []tool.Tool {
	out := make([]tool.Tool, len(tools))
	for i, t := range tools {
		switch t.Info().Access {
		case tool.AccessRead, tool.AccessAgent:
			out[i] = t
		default:
			r := recorded{Tool: t, rec: rec}
			if _, ok := t.(tool.Targeted); ok {
				out[i] = recordedTargeted{r}
			} else {
				out[i] = r
			}
		}
	}
	return out
}

// recorded answers a call from the recording. It keeps the tool's info,
// input checks and permission target, so a call is judged as the recorded
// one was.
type recorded struct {
	tool.Tool
	rec *Recording
}

func (r recorded) Call(_ context.Context, env tool.Env, _ json.RawMessage) (tool.Result, error) {
	b, ok := r.rec.Result(env.ToolUseID)
	if !ok {
		return tool.Errorf("not run: this replay runs read-only tools only, and the recording has no result for call %s of %s", env.ToolUseID, r.Info().Name), nil
	}
	return tool.Result{Content: append([]llm.Block(nil), b.Content...), IsError: b.IsError}, nil
}

func (r recorded) ValidateInput(input json.RawMessage) error {
	if v, ok := r.Tool.(tool.Validating); ok {
		return v.ValidateInput(input)
	}
	set, err := tool.NewSet(r.Tool)
	if err != nil {
		return err
	}
	return set.Validate(r.Info().Name, input)
}

type recordedTargeted struct{ recorded }

func (r recordedTargeted) Target(env tool.Env, input json.RawMessage) (string, error) {
	t, ok := r.Tool.(tool.Targeted)
	if !ok {
		return "", fmt.Errorf("tool %s has no target", r.Info().Name)
	}
	return t.Target(env, input)
}
