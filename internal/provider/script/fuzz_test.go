package script

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/testkit/fuzzcheck"
	"github.com/cadre-dev/cadre/llm"
)

// FuzzParse feeds scenario files to Parse. Beyond not panicking: parsing
// and rendering every turn are quick, every problem names the file (and,
// where it gives one, a line inside it), no error repeats more than an
// excerpt of the file, and every tool input an accepted scenario renders
// is a JSON object.
func FuzzParse(f *testing.F) {
	demo, err := os.ReadFile("testdata/demo.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(demo)
	for _, s := range fuzzcheck.Literals(f, func(s string) bool { return strings.Contains(s, "agents") }) {
		f.Add([]byte(s))
	}

	const name = "fuzz.yaml"
	lineOf := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `:(\d+): `)
	f.Fuzz(func(t *testing.T, data []byte) {
		var m *Model
		var err error
		fuzzcheck.Timed(t, len(data), func() { m, err = Parse(name, data) })
		if err != nil {
			// yaml.v3 puts what is missing at the very end (the document
			// of a file that is only "---") on the line after the last.
			lines := fuzzcheck.Lines(data) + 1
			for _, msg := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(msg, name+": ") && lineOf.FindStringSubmatch(msg) == nil {
					t.Errorf("problem %q does not name the file %s", msg, name)
				}
				if sub := lineOf.FindStringSubmatch(msg); sub != nil {
					if n, _ := strconv.Atoi(sub[1]); n < 1 || n > lines {
						t.Errorf("problem %q is on line %d of a file of %d lines", msg, n, lines)
					}
				}
			}
			fuzzcheck.NoEcho(t, "error", string(data), err.Error())
			return
		}
		if len(m.agents) == 0 {
			t.Fatal("accepted a scenario that scripts no agent")
		}
		msgs := []llm.Message{
			llm.UserText("the prompt"),
			{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse("toolu_1", "Read", nil)}},
			{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult("toolu_1", "the result", false)}},
		}
		for agent, turns := range m.agents {
			if len(turns) == 0 {
				t.Errorf("agent %q is accepted with no turns", agent)
			}
			for _, turn := range slices.Concat(turns, alternatives(turns)) {
				var ans *answer
				var err error
				read, _ := m.read(agent, msgs)
				fuzzcheck.Timed(t, len(data), func() { ans, err = m.render(turn, agent, turn.index, read.data) })
				if err != nil {
					continue // a template may fail at run time; that is a bad_request, not a crash
				}
				for _, b := range ans.tools {
					var obj map[string]any
					if err := json.Unmarshal(b.Input, &obj); err != nil || obj == nil {
						t.Errorf("turn %d of %q: tool %s input %s is not a JSON object: %v", turn.index+1, agent, b.Name, b.Input, err)
					}
				}
			}
		}
	})
}

// alternatives are the alternatives of turns' choose.
func alternatives(turns []*turn) []*turn {
	var out []*turn
	for _, t := range turns {
		out = append(out, t.choose...)
	}
	return out
}
