package cadre_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

type cityIn struct {
	City string `json:"city" jsonschema:"the city"`
}

func weatherTool(name string) tool.Tool {
	return tool.New(tool.Info{Name: name, Description: "Today's weather in a city.", Access: tool.AccessRead},
		func(_ context.Context, _ tool.Env, in cityIn) (tool.Result, error) {
			return tool.Text("sunny in " + in.City), nil
		})
}

func TestAddedToolsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		name  string
		tools []tool.Tool
		want  []string
	}{
		{"built-in name", []tool.Tool{weatherTool("Read")}, []string{"Options.Tools[0]", `"Read"`, "built-in"}},
		{"twice", []tool.Tool{weatherTool("Weather"), weatherTool("Weather")}, []string{"Options.Tools[1]", `"Weather"`, "Options.Tools[0]"}},
		{"nil", []tool.Tool{nil}, []string{"Options.Tools[0]", "nil"}},
		{"no name", []tool.Tool{weatherTool("")}, []string{"Options.Tools[0]", "no name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := openErr(t, cadre.Options{Tools: tc.tools})
			if err == nil {
				t.Fatal("New accepted the tools")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %s", err, w)
				}
			}
		})
	}
}

// An added tool is offered to the main agent and runs; a subagent whose
// definition lists it gets it, one whose allowlist leaves it out does not.
func TestAddedToolReachesMainAgentAndTheChildrenThatListIt(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	offered := map[string][]string{} // agent → tool names of its first request
	f.fn = func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		mu.Lock()
		if _, seen := offered[req.Agent]; !seen {
			for _, s := range req.Tools {
				offered[req.Agent] = append(offered[req.Agent], s.Name)
			}
		}
		mu.Unlock()
		last := req.Messages[len(req.Messages)-1]
		if req.Agent != "main" {
			return llm.Reply(llm.Text("done")), nil
		}
		switch len(req.Messages) {
		case 1:
			return llm.Reply(llm.ToolUse("w1", "Weather", json.RawMessage(`{"city":"Lyon"}`))), nil
		case 3:
			return llm.Reply(
				llm.ToolUse("a1", "Agent", json.RawMessage(`{"description":"forecast","prompt":"forecast","subagent_type":"forecaster"}`)),
				llm.ToolUse("a2", "Agent", json.RawMessage(`{"description":"read","prompt":"read","subagent_type":"reader"}`)),
			), nil
		}
		return llm.Reply(llm.Text("Answer: " + last.Content[0].ResultText())), nil
	}
	rt := f.open(t, cadre.Options{
		Tools: []tool.Tool{weatherTool("Weather")},
		Agents: []cadre.Agent{
			{Name: "forecaster", Description: "Forecasts.", Tools: []string{"Weather"}},
			{Name: "reader", Description: "Reads.", Tools: []string{"Read"}},
		},
	})
	evs := collect(t, rt, cadre.Request{Prompt: "weather?"})
	if tools := evs[0].Init.Tools; !slices.Contains(tools, "Weather") {
		t.Errorf("init tools %v lack Weather", tools)
	}
	var weather string
	for _, e := range evs {
		if e.Type == cadre.EventUser && e.ParentToolUseID == "" {
			for _, b := range e.Message.Content {
				if b.ToolUseID == "w1" {
					weather = b.ResultText()
				}
			}
		}
	}
	if weather != "sunny in Lyon" {
		t.Errorf("the Weather call returned %q", weather)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Contains(offered["forecaster"], "Weather") {
		t.Errorf("forecaster was offered %v, want Weather among them", offered["forecaster"])
	}
	if slices.Contains(offered["reader"], "Weather") {
		t.Errorf("reader was offered %v, which its allowlist leaves Weather out of", offered["reader"])
	}
}
