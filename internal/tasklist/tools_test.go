package tasklist_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/tasklist"
	"github.com/cadre-dev/cadre/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// A lead and two teammates through the four tools: what the model reads
// and what stream-json's tool_use_result carries, as a golden file.
func TestToolsGolden(t *testing.T) {
	st := tasklist.NewMem()
	var changes []string
	refuse := map[string]bool{"3": true}
	tools := tasklist.Tools(tasklist.Options{
		Store: st,
		Who: func(_ context.Context, env tool.Env) (tasklist.Caller, error) {
			if env.SessionID == "stranger" {
				return tasklist.Caller{}, tasklist.ErrNoTeam
			}
			return tasklist.Caller{List: "team-1", Agent: env.SessionID}, nil
		},
		Completing: func(_ context.Context, c tasklist.Caller, it tasklist.Item) error {
			if refuse[it.ID] {
				delete(refuse, it.ID)
				return errors.New("the TaskCompleted hook says: tests are failing")
			}
			return nil
		},
		Changed: func(_ context.Context, c tasklist.Caller, ch tasklist.Change) {
			changes = append(changes, c.Agent+" #"+ch.Item.ID+" "+ch.Fields[0])
		},
		Now: func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) },
	})
	byName := map[string]tool.Tool{}
	for _, tl := range tools {
		byName[tl.Info().Name] = tl
	}
	steps := []struct{ who, tool, input string }{
		{"main", "TaskCreate", `{"subject":"Write the parser","description":"Parse the config file","activeForm":"Writing the parser"}`},
		{"main", "TaskCreate", `{"subject":"Write the printer","description":"Print the config back"}`},
		{"main", "TaskCreate", `{"subject":"Test both","description":"Round-trip tests","metadata":{"priority":"high"}}`},
		{"main", "TaskUpdate", `{"taskId":"3","addBlockedBy":["1","2"]}`},
		{"alice", "TaskUpdate", `{"taskId":"1","owner":"alice","status":"in_progress"}`},
		{"bob", "TaskUpdate", `{"taskId":"1","owner":"bob"}`},
		{"bob", "TaskUpdate", `{"taskId":"3","status":"in_progress"}`},
		{"bob", "TaskUpdate", `{"taskId":"2","status":"in_progress"}`},
		{"bob", "TaskList", `{}`},
		{"alice", "TaskUpdate", `{"taskId":"1","status":"completed"}`},
		{"bob", "TaskUpdate", `{"taskId":"2","status":"completed"}`},
		{"alice", "TaskUpdate", `{"taskId":"3","owner":"alice"}`},
		{"alice", "TaskUpdate", `{"taskId":"3","status":"completed"}`},
		{"alice", "TaskUpdate", `{"taskId":"3","status":"completed"}`},
		{"main", "TaskGet", `{"taskId":"3"}`},
		{"main", "TaskGet", `{"taskId":"9"}`},
		{"main", "TaskList", `{}`},
		{"stranger", "TaskList", `{}`},
	}
	type out struct {
		Who     string          `json:"who"`
		Call    string          `json:"call"`
		Input   json.RawMessage `json:"input"`
		Text    string          `json:"text"`
		IsError bool            `json:"is_error,omitempty"`
		Meta    any             `json:"meta,omitempty"`
	}
	var got []out
	for _, s := range steps {
		tl := byName[s.tool]
		if v, ok := tl.(tool.Validating); ok {
			if err := v.ValidateInput(json.RawMessage(s.input)); err != nil {
				t.Fatalf("%s %s: the input fails its own schema: %v", s.tool, s.input, err)
			}
		}
		res, err := tl.Call(t.Context(), tool.Env{SessionID: s.who}, json.RawMessage(s.input))
		if err != nil {
			t.Fatalf("%s: %v", s.tool, err)
		}
		got = append(got, out{Who: s.who, Call: s.tool, Input: json.RawMessage(s.input), Text: res.Content[0].Text, IsError: res.IsError, Meta: res.Meta})
	}
	b, err := json.MarshalIndent(map[string]any{"calls": got, "changes": changes}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if string(want) != string(b)+"\n" {
		t.Errorf("the tools' results differ from %s (run with -update and read the diff):\n%s", golden, b)
	}
}

// The schemas are Claude Code's: a call it would send validates, one with
// a field it does not know fails.
func TestToolSchemas(t *testing.T) {
	tools := tasklist.Tools(tasklist.Options{Store: tasklist.NewMem()})
	for _, c := range []struct {
		tool, input string
		ok          bool
	}{
		{"TaskCreate", `{"subject":"s","description":"d"}`, true},
		{"TaskCreate", `{"subject":"s"}`, false},
		{"TaskUpdate", `{"taskId":"1","status":"deleted"}`, true},
		{"TaskUpdate", `{"taskId":"1","status":"done"}`, false},
		{"TaskUpdate", `{"taskId":"1","priority":3}`, false},
		{"TaskList", `{}`, true},
		{"TaskList", `{"status_filter":"all"}`, false},
		{"TaskGet", `{}`, false},
	} {
		for _, tl := range tools {
			if tl.Info().Name != c.tool {
				continue
			}
			err := tl.(tool.Validating).ValidateInput(json.RawMessage(c.input))
			if (err == nil) != c.ok {
				t.Errorf("%s %s: validation error %v, want ok=%v", c.tool, c.input, err, c.ok)
			}
		}
	}
}

// A create the TaskCreated hook refuses is taken back out of the list,
// and the tool says why; Changed never hears of it.
func TestCreatedMayRefuse(t *testing.T) {
	st := tasklist.NewMem()
	changed := 0
	tools := tasklist.Tools(tasklist.Options{
		Store: st,
		Who: func(context.Context, tool.Env) (tasklist.Caller, error) {
			return tasklist.Caller{List: "team-1", Agent: "main"}, nil
		},
		Created: func(_ context.Context, _ tasklist.Caller, it tasklist.Item) error {
			if it.Subject == "forbidden" {
				return errors.New("the TaskCreated hook says no")
			}
			return nil
		},
		Changed: func(context.Context, tasklist.Caller, tasklist.Change) { changed++ },
	})
	create := tools[0]
	for _, tc := range []struct {
		subject string
		refused bool
	}{{"forbidden", true}, {"allowed", false}} {
		res, err := create.Call(context.Background(), tool.Env{}, json.RawMessage(`{"subject":"`+tc.subject+`","description":"d"}`))
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError != tc.refused {
			t.Errorf("%s: IsError %v, want %v: %v", tc.subject, res.IsError, tc.refused, res.Content)
		}
	}
	l, err := st.GetList(context.Background(), "team-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 1 || l.Items[0].Subject != "allowed" {
		t.Errorf("the list holds %+v, want only the allowed item", l.Items)
	}
	if changed != 1 {
		t.Errorf("Changed heard %d creates, want 1", changed)
	}
}
