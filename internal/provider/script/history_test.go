package script

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/llm"
)

// withReminder is what the loop sends: the history, its newest user
// message copied with a per-turn block added (loop.remind).
func withReminder(history []llm.Message) []llm.Message {
	out := slices.Clone(history)
	last := out[len(out)-1]
	last.Content = append(slices.Clone(last.Content), llm.Block{Type: llm.BlockText, Text: "<system-reminder>x</system-reminder>", PerTurn: true})
	out[len(out)-1] = last
	return out
}

// A conversation's reading is the same whether the model remembers the
// earlier calls or not, and each call reads only the messages added since
// the one before: a long conversation costs O(new messages) a call.
func TestReadIsIncremental(t *testing.T) {
	m := &Model{convs: map[convKey]*convReading{}}
	fresh := func(agent string, msgs []llm.Message) reading {
		r, _ := (&Model{convs: map[convKey]*convReading{}}).read(agent, msgs)
		return r
	}
	opts := cmp.AllowUnexported(reading{})

	a := []llm.Message{llm.UserText("the same prompt")}
	b := []llm.Message{llm.UserText("the same prompt")} // a parallel child given the same prompt
	for turn := range 50 {
		for _, c := range []struct {
			name string
			h    *[]llm.Message
		}{{"a", &a}, {"b", &b}} {
			msgs := withReminder(*c.h)
			// a and b share a key, so each call finds the other's
			// memory: it must notice, and read its own from the start.
			got, _ := m.read("child", msgs)
			if diff := cmp.Diff(fresh("child", msgs), got, opts); diff != "" {
				t.Fatalf("turn %d of %s: remembered reading differs (-fresh +got):\n%s", turn, c.name, diff)
			}
			reply := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.ToolUse(fmt.Sprintf("toolu_%d", turn), "Read", nil)}}
			result := llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult(fmt.Sprintf("toolu_%d", turn), fmt.Sprintf("%s result %d", c.name, turn), false)}}
			*c.h = append(*c.h, reply, result)
		}
	}

	main := []llm.Message{llm.UserText("main prompt")}
	for turn := range 200 {
		msgs := withReminder(main)
		got, n := m.read("main", msgs)
		if turn > 1 && n != 3 {
			t.Fatalf("turn %d: read %d messages, want 3 (the newest message of the call before, sent as a copy then, the reply and the new message)", turn, n)
		}
		if got.replies != turn {
			t.Fatalf("turn %d: %d replies counted", turn, got.replies)
		}
		main = append(main, llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("Noted.")}},
			llm.UserText(fmt.Sprintf("<task-notification>%d</task-notification>", turn)))
	}

	// Compaction replaces the messages: the memory no longer matches and
	// the conversation is read again, summary included.
	summary := llm.UserText(`<context-summary replies="200">what happened</context-summary>`)
	if !compact.IsSummary(summary) {
		t.Fatal("the test's summary is not one compact recognises")
	}
	compacted := []llm.Message{llm.UserText("main prompt"), summary, {Role: llm.RoleAssistant, Content: []llm.Block{llm.Text("ok")}}, llm.UserText("go on")}
	got, _ := m.read("main", withReminder(compacted))
	if diff := cmp.Diff(fresh("main", withReminder(compacted)), got, opts); diff != "" {
		t.Errorf("after compaction (-fresh +got):\n%s", diff)
	}
	if got.replies != 201 {
		t.Errorf("after compaction: %d replies, want 201", got.replies)
	}
}
