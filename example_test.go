package cadre_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// The examples run offline: the model is a Go function (llm.ModelFunc),
// the working directory a temporary one, and the state dir (CADRE_HOME,
// where sessions and tasks are kept) another, passed through
// Options.Getenv.

// Run a prompt and print the answer.
func Example() {
	dir, _ := os.MkdirTemp("", "cadre-example-")
	defer os.RemoveAll(dir)
	model := &llm.ModelFunc{ID: "example", Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		return llm.Reply(llm.Text("Hello! You said: " + req.Messages[0].Text())), nil
	}}
	rt, err := cadre.New(context.Background(), cadre.Options{
		Cwd: dir,
		LLM: model,
		Getenv: func(key string) string {
			if key == "CADRE_HOME" {
				return filepath.Join(dir, ".state")
			}
			return ""
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rt.Close()
	for ev, err := range rt.Run(context.Background(), cadre.Request{Prompt: "good morning"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Type == cadre.EventResult {
			fmt.Println(ev.Result.Result)
		}
	}
	// Output: Hello! You said: good morning
}

// Declare a subagent in code and watch the main agent delegate to it: the
// subagent's messages arrive in the same stream, tagged with the id of the
// Agent call that started it.
func ExampleOptions_agents() {
	model := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		if req.Agent == "poet" {
			return llm.Reply(llm.Text("An old silent pond / a frog jumps in")), nil
		}
		if len(req.Messages) == 1 { // the main agent's first turn: delegate
			return llm.Reply(llm.ToolUse("call-1", "Agent", json.RawMessage(
				`{"subagent_type": "poet", "description": "Write a haiku", "prompt": "A haiku about a frog."}`))), nil
		}
		return llm.Reply(llm.Text("The poet has written it.")), nil
	}
	rt, done := open(model, cadre.Options{Agents: []cadre.Agent{{
		Name:        "poet",
		Description: "Writes haiku. Use it for any poem.",
		Prompt:      "You write haiku.",
		Tools:       []string{}, // none: it only writes
	}}})
	defer done()
	for ev, err := range rt.Run(context.Background(), cadre.Request{Prompt: "Write me a haiku."}) {
		switch {
		case err != nil:
			fmt.Println(err)
			return
		case ev.Type == cadre.EventAssistant && ev.ParentToolUseID != "":
			fmt.Printf("%s (started by %s): %s\n", ev.AgentType, ev.ParentToolUseID, ev.Message.Text())
		case ev.Type == cadre.EventResult:
			fmt.Println("main:", ev.Result.Result)
		}
	}
	// Output:
	// poet (started by call-1): An old silent pond / a frog jumps in
	// main: The poet has written it.
}

// Answer permission requests: in the default mode, a command needs
// approval, and Options.Permission is asked.
func ExamplePermissionFunc() {
	model := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if r := last.Content[0]; r.Type == llm.BlockToolResult {
			return llm.Reply(llm.Text(fmt.Sprintf("refused: %v", r.IsError))), nil
		}
		return llm.Reply(llm.ToolUse("call-1", "Bash", json.RawMessage(`{"command": "rm -rf build"}`))), nil
	}
	rt, done := open(model, cadre.Options{
		Permission: func(_ context.Context, req cadre.PermissionRequest) (cadre.PermissionDecision, error) {
			fmt.Printf("may %s (%s) run %q? no\n", req.Tool, req.Agent, req.Target)
			return cadre.PermissionDecision{Message: "not now: the build folder is in use"}, nil
		},
	})
	defer done()
	for ev, err := range rt.Run(context.Background(), cadre.Request{Prompt: "Clean the build."}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Type == cadre.EventResult {
			fmt.Println(ev.Result.Result)
			fmt.Println("denials:", len(ev.Result.PermissionDenials))
		}
	}
	// Output:
	// may Bash (main) run "rm -rf build"? no
	// refused: true
	// denials: 1
}

// Add a tool of your own: a typed tool infers its input schema from a Go
// struct.
func ExampleOptions_tools() {
	type forecastIn struct {
		City string `json:"city" jsonschema:"the city to forecast"`
	}
	forecast := tool.New(
		tool.Info{Name: "Forecast", Description: "Tomorrow's weather in a city.", Access: tool.AccessRead},
		func(_ context.Context, _ tool.Env, in forecastIn) (tool.Result, error) {
			return tool.Text("rain in " + in.City), nil
		})
	model := func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if r := last.Content[0]; r.Type == llm.BlockToolResult {
			return llm.Reply(llm.Text("Take an umbrella: " + r.ResultText() + ".")), nil
		}
		return llm.Reply(llm.ToolUse("call-1", "Forecast", json.RawMessage(`{"city": "Lyon"}`))), nil
	}
	rt, done := open(model, cadre.Options{Tools: []tool.Tool{forecast}})
	defer done()
	for ev, err := range rt.Run(context.Background(), cadre.Request{Prompt: "Weather in Lyon tomorrow?"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Type == cadre.EventResult {
			fmt.Println(ev.Result.Result)
		}
	}
	// Output: Take an umbrella: rain in Lyon.
}

// open is the examples' set-up: a runtime on a temporary project with a
// temporary state dir, the model a Go function. done closes the runtime
// and removes the directories.
func open(model func(context.Context, *llm.Request) (*llm.Response, error), opts cadre.Options) (rt *cadre.Runtime, done func()) {
	dir, _ := os.MkdirTemp("", "cadre-example-")
	opts.Cwd = dir
	opts.LLM = &llm.ModelFunc{ID: "example", Func: model}
	opts.Getenv = func(key string) string {
		if key == "CADRE_HOME" {
			return filepath.Join(dir, ".state")
		}
		return ""
	}
	rt, err := cadre.New(context.Background(), opts)
	if err != nil {
		panic(err)
	}
	return rt, func() { rt.Close(); os.RemoveAll(dir) }
}

// Consume subagent events: a background run reports its start and end as
// task events, and its messages come tagged with the Agent call that
// started it. The main agent gets a turn when the run's notification
// arrives, so the run yields a result per turn; the last is the run's.
func ExampleRuntime_Run_subagentEvents() {
	// The counter answers once the main agent has replied to its launch,
	// so that the output's order does not depend on which is faster.
	launched := make(chan struct{})
	var once sync.Once
	model := func(ctx context.Context, req *llm.Request) (*llm.Response, error) {
		last := req.Messages[len(req.Messages)-1].Text()
		switch {
		case req.Agent == "counter":
			select {
			case <-launched:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return llm.Reply(llm.Text("There are 42 files.")), nil
		case len(req.Messages) == 1:
			return llm.Reply(llm.ToolUse("call-1", "Agent", json.RawMessage(
				`{"subagent_type": "counter", "description": "Count files", "prompt": "Count the files.", "run_in_background": true}`))), nil
		case strings.Contains(last, "<task-notification>"):
			return llm.Reply(llm.Text("The count is in: 42 files.")), nil
		}
		once.Do(func() { close(launched) })
		return llm.Reply(llm.Text("I started the count.")), nil
	}
	rt, done := open(model, cadre.Options{Agents: []cadre.Agent{{
		Name: "counter", Description: "Counts files.", Tools: []string{"Glob"},
	}}})
	defer done()
	for ev, err := range rt.Run(context.Background(), cadre.Request{Prompt: "How many files are there?"}) {
		switch {
		case err != nil:
			fmt.Println(err)
			return
		case ev.Subtype == cadre.SubtypeTaskStarted:
			fmt.Printf("started %q (%s, background %v)\n", ev.Task.Description, ev.Task.AgentType, ev.Task.Background)
		case ev.Subtype == cadre.SubtypeTaskNotification:
			fmt.Printf("ended: %s (%s)\n", ev.Task.Summary, ev.Task.Status)
		case ev.Type == cadre.EventAssistant && ev.ParentToolUseID != "":
			fmt.Printf("%s (started by %s): %s\n", ev.AgentType, ev.ParentToolUseID, ev.Message.Text())
		case ev.Type == cadre.EventResult:
			fmt.Println("main:", ev.Result.Result)
		}
	}
	// Unordered output:
	// started "Count files" (counter, background true)
	// counter (started by call-1): There are 42 files.
	// ended: There are 42 files. (completed)
	// main: I started the count.
	// main: The count is in: 42 files.
}
