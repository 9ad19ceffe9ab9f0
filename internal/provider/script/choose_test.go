package script

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
)

// claimScenario is a worker that loops over a shared list: it lists, claims
// the first free item, completes it, and stops once nothing is left — the
// shape a team benchmark's teammates need (bench/team_test.go).
const claimScenario = `
agents:
  "*":
    - tool_use: [{name: TaskList}]
    - repeat: true
      choose:
        - when: '{{match "It is yours" .LastToolResult}}'
          tool_use: [{name: TaskUpdate, input: {taskId: '{{find "^Updated task #(\\d+)" .LastToolResult}}', status: completed}}]
        - when: '{{match "(?m)^#\\d+ \\[pending\\] [^()\\[\\]\\n]*$" .LastToolResult}}'
          tool_use: [{name: TaskUpdate, input: {taskId: '{{find "(?m)^#(\\d+) \\[pending\\] [^()\\[\\]\\n]*$" .LastToolResult}}', status: in_progress}}]
        - when: '{{and (match "^#" .LastToolResult) (not (match "\\[(pending|in_progress)\\]" .LastToolResult))}}'
          text: "Nothing left at turn {{.Turn}}."
        - tool_use: [{name: TaskList}]
`

// afterResult is a conversation of n turns whose newest tool result is
// result.
func afterResult(n int, result string) []llm.Message {
	msgs := conversation("work the list", n)
	last := msgs[len(msgs)-1]
	last.Content = []llm.Block{llm.ToolResult(fmt.Sprintf("toolu_%d", n-1), result, false)}
	msgs[len(msgs)-1] = last
	return msgs
}

func TestChooseAndRepeat(t *testing.T) {
	m := mustParse(t, claimScenario)
	tests := []struct {
		name string
		msgs []llm.Message
		want string // the tool call as "Name input", or the text
	}{
		{"first turn lists", conversation("work the list", 0), "TaskList {}"},
		{"a free item is claimed, the lowest first", afterResult(1, "#1 [completed] a (bob)\n#2 [pending] b [blocked by #1]\n#3 [pending] c\n#4 [pending] d"),
			`TaskUpdate {"taskId":"3","status":"in_progress"}`},
		{"a claimed item is completed", afterResult(2, "Updated task #3: owner, status. It is yours (alice)."),
			`TaskUpdate {"taskId":"3","status":"completed"}`},
		{"a lost claim lists again", afterResult(3, "task #3 is already owned by bob"), "TaskList {}"},
		{"blocked and owned items only: list again", afterResult(40, "#1 [in_progress] a (bob)\n#2 [pending] b [blocked by #1]"), "TaskList {}"},
		{"all completed: done, at the real turn", afterResult(57, "#1 [completed] a (bob)\n#2 [completed] b (alice)"), "Nothing left at turn 58."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := respond(t, m, &llm.Request{Agent: "worker", Messages: tt.msgs})
			got := resp.Message.Text()
			for _, u := range resp.Message.ToolUses() {
				got = u.Name + " " + string(u.Input)
			}
			if got != tt.want {
				t.Errorf("answer %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChooseNoneMatches(t *testing.T) {
	m := mustParse(t, `
agents:
  main:
    - choose:
        - when: '{{match "yes" .Prompt}}'
          text: "yes"
`)
	_, err := run(t.Context(), m, &llm.Request{Messages: conversation("no", 0)})
	if err == nil || !strings.Contains(err.Error(), `scenario demo.yaml: line 4: turn 1 of agent "main": no alternative of choose applies`) {
		t.Fatalf("error %v", err)
	}
	if e := llmErr(t, err); e.Kind != llm.ErrBadRequest {
		t.Errorf("kind %s", e.Kind)
	}
	// when must say true or false: a typo is not read as false.
	bad := mustParse(t, "agents: {main: [{choose: [{when: '{{.Prompt}}', text: a}, {text: b}]}]}")
	if _, err := run(t.Context(), bad, &llm.Request{Messages: conversation("maybe", 0)}); err == nil || !strings.Contains(err.Error(), "when rendered neither true nor false") {
		t.Fatalf("error %v", err)
	}
	// Without repeat a script still ends.
	if _, err := run(t.Context(), m, &llm.Request{Messages: conversation("yes", 1)}); err == nil || !strings.Contains(err.Error(), "has no turn 2") {
		t.Fatalf("error %v", err)
	}
}

func TestChooseValidation(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"choose beside an answer", "agents: {main: [{text: a, choose: [{text: b}]}]}",
			"turn 1 of the agent at line 1: choose is given with text, thinking, tool_use, usage, delay or error: each alternative gives its own"},
		{"empty choose", "agents: {main: [{choose: []}]}", "turn 1 of the agent at line 1: choose is an empty list"},
		{"when outside choose", "agents: {main: [{text: a, when: 'true'}]}", "turn 1 of the agent at line 1: unknown key"},
		{"repeat not last", "agents: {main: [{text: a, repeat: true}, {text: b}]}",
			"turn 1 of the agent at line 1: repeat is for an agent's last turn"},
		{"repeat not a boolean", "agents: {main: [{text: a, repeat: often}]}", "turn 1 of the agent at line 1: repeat must be true or false"},
		{"nested choose", "agents: {main: [{choose: [{choose: [{text: a}]}]}]}", "alternative 1: unknown key"},
		{"empty alternative", "agents: {main: [{choose: [{when: 'true'}]}]}", "turn 1 of the agent at line 1: alternative 1: the turn has nothing in it"},
		{"bad pattern", `agents: {main: [{text: '{{match "(" .Prompt}}'}]}`, "turn 1 of the agent at line 1: text: a pattern of match or find is not a valid regular expression"},
		{"bad pattern in when", `agents: {main: [{choose: [{when: '{{find "[" .Prompt}}', text: a}]}]}`, "alternative 1: when: a pattern of match or find is not a valid regular expression"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("demo.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error\n%v\nwant it to contain\n%s", err, tt.want)
			}
		})
	}
}

func TestFindAndMatch(t *testing.T) {
	m := mustParse(t, `
agents:
  main:
    - text: '{{find "#(\\d+)" .Prompt}}|{{find "[a-z]+" .Prompt}}|{{find "zzz" .Prompt}}|{{match "^take" .Prompt}}|{{match "^x" .Prompt}}'
`)
	if got := respond(t, m, &llm.Request{Messages: conversation("take #12 and #13", 0)}).Message.Text(); got != "12|take||true|false" {
		t.Errorf("text %q", got)
	}
}
