package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type echoIn struct {
	Text string `json:"text"`
}

func echoTools(t *testing.T) *tool.Set {
	t.Helper()
	echo := tool.New(tool.Info{Name: "echo", Description: "echo", Access: tool.AccessRead, ConcurrencySafe: true},
		func(_ context.Context, _ tool.Env, in echoIn) (tool.Result, error) {
			return tool.Text("echo:" + in.Text), nil
		})
	s, err := tool.NewSet(echo)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// model calls echo on its first n calls, then answers "done"; every reply
// reports usage of 10 input and 1 output tokens.
func model(name string, n int) *llm.ModelFunc {
	calls := 0
	return &llm.ModelFunc{ID: name, Func: func(context.Context, *llm.Request) (*llm.Response, error) {
		calls++
		r := llm.Reply(llm.Text("done"))
		if calls <= n {
			r = llm.Reply(llm.ToolUse(fmt.Sprint("t", calls), "echo", json.RawMessage(`{"text":"x"}`)))
		}
		r.ID, r.Model = fmt.Sprint("msg_", calls), name
		r.Usage = llm.Usage{InputTokens: 10, OutputTokens: 1}
		return r, nil
	}}
}

func newSession(t *testing.T) (*session.Manager, *session.Session) {
	t.Helper()
	m, _, s := newIndexedSession(t)
	return m, s
}

func newIndexedSession(t *testing.T) (*session.Manager, session.Index, *session.Session) {
	t.Helper()
	idx := session.NewMem()
	m := session.NewManager(idx, filepath.Join(t.TempDir(), "sessions"), nil, nil)
	s, err := m.Create(t.Context(), session.Info{Agent: "main"})
	if err != nil {
		t.Fatal(err)
	}
	return m, idx, s
}

func transcript(t *testing.T, s *session.Session) []session.Entry {
	t.Helper()
	entries, problems, err := session.ReadTranscript(s.Info.TranscriptPath)
	if err != nil || len(problems) > 0 {
		t.Fatalf("read transcript: %v %v", err, problems)
	}
	return entries
}

// entryType is the transcript entry type an event must have been saved as.
func entryType(e event.Event) string {
	if e.Type == event.TypeSystem {
		return session.EntrySummary
	}
	return string(e.Type)
}

// TestRecordsBeforePublishing checks every published message was already in
// the transcript, under the same uuid, and that both hold the same
// messages in the same order.
func TestRecordsBeforePublishing(t *testing.T) {
	_, sess := newSession(t)
	var bus event.Bus
	var published []event.Event
	var problems []string
	// The filter runs inside Publish, so it sees the transcript as it was
	// at that moment.
	sub := bus.Subscribe(func(e event.Event) bool {
		published = append(published, e)
		saved := false
		for _, en := range transcript(t, sess) {
			if en.UUID == e.UUID {
				saved = en.Type == entryType(e)
			}
		}
		if !saved {
			problems = append(problems, fmt.Sprintf("%s event %s published before it was saved", e.Type, e.UUID))
		}
		return false
	})
	defer sub.Close()
	spec := runner.Spec{
		Session: sess, Bus: &bus, PublishPrompt: true,
		Tag:  runner.Tag{RootSessionID: "root", ParentToolUseID: "toolu_1", AgentID: "a1"},
		Loop: loop.Config{Model: model("m", 2), Tools: echoTools(t)},
	}
	res := runner.Run(t.Context(), spec, nil, llm.UserText("go"))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	entries := transcript(t, sess)
	if len(entries) != 6 || len(published) != len(entries) {
		t.Fatalf("%d entries, %d events; want 6 of each (prompt, 2 tool rounds, answer)", len(entries), len(published))
	}
	for i, e := range published {
		en := entries[i]
		if e.UUID != en.UUID || en.Type != entryType(e) || e.SessionID != "root" || e.ParentToolUseID != "toolu_1" || e.AgentID != "a1" {
			t.Errorf("event %d (%s %s, session %s) does not match entry %d (%s %s)", i, e.Type, e.UUID, e.SessionID, i, en.Type, en.UUID)
		}
		if diff := cmp.Diff(en.Message, e.Message); diff != "" {
			t.Errorf("event %d message differs from the saved one:\n%s", i, diff)
		}
	}
	if a := published[1].Assistant; a == nil || a.MessageID != "msg_1" || a.Model != "m" || a.Usage.InputTokens != 10 {
		t.Errorf("assistant metadata %+v", a)
	}
	if en := entries[1]; en.MessageID != "msg_1" || en.Model != "m" || en.StopReason != "tool_use" || en.Usage == nil {
		t.Errorf("assistant entry %+v", en)
	}
	if published[2].ToolUseResult != nil {
		t.Errorf("tool result event carries %v; echo gives no metadata", published[2].ToolUseResult)
	}
}

func TestPublishPrompt(t *testing.T) {
	for _, publish := range []bool{false, true} {
		t.Run(fmt.Sprint("PublishPrompt=", publish), func(t *testing.T) {
			_, sess := newSession(t)
			var bus event.Bus
			sub := bus.Subscribe(nil)
			spec := runner.Spec{Session: sess, Bus: &bus, PublishPrompt: publish, Loop: loop.Config{Model: model("m", 0)}}
			conv := runner.Start(spec, nil)
			if res := conv.Turn(t.Context(), llm.UserText("prompt")); res.Err != nil {
				t.Fatal(res.Err)
			}
			// Later inputs (a notification) are always published.
			if res := conv.Turn(t.Context(), llm.UserText("notification")); res.Err != nil {
				t.Fatal(res.Err)
			}
			if err := conv.Close(""); err != nil {
				t.Fatal(err)
			}
			sub.Close()
			var got []string
			for e := range sub.Events(t.Context()) {
				got = append(got, string(e.Type)+":"+e.Message.Text())
			}
			want := []string{"assistant:done", "user:notification", "assistant:done"}
			if publish {
				want = append([]string{"user:prompt"}, want...)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("published (-want +got):\n%s", diff)
			}
			// The transcript has the prompt either way.
			if entries := transcript(t, sess); len(entries) != 4 || entries[0].Message.Text() != "prompt" {
				t.Errorf("transcript %+v", entries)
			}
		})
	}
}

func TestTotals(t *testing.T) {
	var totals runner.Totals
	cost := func(u llm.Usage) llm.Cost { return llm.USD(float64(u.Total()) / 100) }
	runs := []struct {
		model string
		tools int
	}{{"a", 1}, {"b", 0}, {"a", 0}}
	for _, r := range runs {
		_, sess := newSession(t)
		spec := runner.Spec{Session: sess, Totals: &totals, Cost: cost, Loop: loop.Config{Model: model(r.model, r.tools), Tools: echoTools(t)}}
		res := runner.Run(t.Context(), spec, nil, llm.UserText("go"))
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if want := cost(res.Usage); res.Cost != want {
			t.Errorf("result cost %v, want %v", res.Cost, want)
		}
	}
	usage, total, byModel := totals.Snapshot()
	per := llm.Usage{InputTokens: 10, OutputTokens: 1}
	wantA := event.ModelUsage{Usage: per.Add(per).Add(per), CostUSD: llm.USD(0.33)}
	wantB := event.ModelUsage{Usage: per, CostUSD: llm.USD(0.11)}
	approx := cmp.Comparer(func(a, b llm.Cost) bool {
		x, xk := a.USD()
		y, yk := b.USD()
		return xk == yk && x-y < 1e-9 && y-x < 1e-9
	})
	if diff := cmp.Diff(map[string]event.ModelUsage{"a": wantA, "b": wantB}, byModel, approx); diff != "" {
		t.Errorf("by model (-want +got):\n%s", diff)
	}
	if usage != wantA.Usage.Add(wantB.Usage) || !cmp.Equal(total, llm.USD(0.44), approx) {
		t.Errorf("total usage %+v cost %v", usage, total)
	}
}

func TestCloseStatus(t *testing.T) {
	boom := &llm.ModelFunc{Func: func(context.Context, *llm.Request) (*llm.Response, error) {
		return nil, errors.New("overloaded")
	}}
	tests := []struct {
		name   string
		model  llm.Model
		cancel bool
		close  session.Status // passed to Close; "" means the last turn's
		want   session.Status
		turns  int
	}{
		{name: "success", model: model("m", 1), want: session.StatusCompleted, turns: 2},
		{name: "model failure", model: boom, want: session.StatusFailed},
		{name: "cancelled", model: model("m", 1), cancel: true, want: session.StatusKilled},
		{name: "explicit status wins", model: model("m", 0), close: session.StatusIdle, want: session.StatusIdle, turns: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, idx, sess := newIndexedSession(t)
			ctx, cancel := context.WithCancel(t.Context())
			if tt.cancel {
				cancel()
			}
			defer cancel()
			conv := runner.Start(runner.Spec{Session: sess, Loop: loop.Config{Model: tt.model, Tools: echoTools(t)}}, nil)
			res := conv.Turn(ctx, llm.UserText("go"))
			if tt.close == "" && res.Status != tt.want {
				t.Errorf("result status %q, want %q", res.Status, tt.want)
			}
			if err := conv.Close(tt.close); err != nil {
				t.Fatal(err)
			}
			info, err := idx.GetSession(t.Context(), sess.Info.ID)
			if err != nil {
				t.Fatal(err)
			}
			if info.Status != tt.want || info.NumTurns != tt.turns || info.Usage.InputTokens != int64(10*tt.turns) {
				t.Errorf("recorded status %q, %d turns, usage %+v; want %q, %d turns", info.Status, info.NumTurns, info.Usage, tt.want, tt.turns)
			}
		})
	}
}

// TestCompactionEntry checks a compaction is saved as a compact_boundary
// summary entry, published as Claude Code's system/compact_boundary line
// under the same uuid, and that the transcript resumes to the compacted
// history.
func TestCompactionEntry(t *testing.T) {
	m, sess := newSession(t)
	var bus event.Bus
	sub := bus.Subscribe(func(e event.Event) bool { return e.Type == event.TypeSystem })
	summary := llm.UserText("<context-summary>what happened</context-summary>")
	var kept []llm.Message
	var observed []loop.Step
	spec := runner.Spec{
		Session: sess, Bus: &bus, Tag: runner.Tag{RootSessionID: "root"},
		Observe: func(s loop.Step) { observed = append(observed, s) },
		Loop: loop.Config{
			Model: model("m", 3), Tools: echoTools(t),
			Compact: func(_ context.Context, msgs []llm.Message, last llm.Usage) ([]llm.Message, *llm.Message, error) {
				if kept != nil || len(msgs) < 5 {
					return msgs, nil, nil
				}
				kept = msgs[len(msgs)-2:]
				return append([]llm.Message{summary}, kept...), &summary, nil
			},
		},
	}
	conv := runner.Start(spec, nil)
	res := conv.Turn(t.Context(), llm.UserText("go"))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if err := conv.Close(""); err != nil {
		t.Fatal(err)
	}
	sub.Close()

	var boundary *session.Entry
	entries := transcript(t, sess)
	for i, e := range entries {
		if e.Type == session.EntrySummary {
			boundary = &entries[i]
		}
	}
	if boundary == nil || boundary.Subtype != session.SubtypeCompactBoundary {
		t.Fatalf("no compact_boundary entry in %+v", entries)
	}
	if diff := cmp.Diff(&summary, boundary.Message); diff != "" {
		t.Errorf("boundary message (-want +got):\n%s", diff)
	}
	var data session.CompactBoundary
	if err := json.Unmarshal(boundary.Data, &data); err != nil {
		t.Fatal(err)
	}
	// pre_tokens: the last reply's 11 tokens and the tool result after it,
	// "echo:x", estimated at 1.
	if diff := cmp.Diff(session.CompactBoundary{Trigger: "auto", PreTokens: 12, Kept: kept}, data); diff != "" {
		t.Errorf("boundary data (-want +got):\n%s", diff)
	}

	var events []event.Event
	for e := range sub.Events(t.Context()) {
		events = append(events, e)
	}
	if len(events) != 1 || events[0].UUID != boundary.UUID || events[0].Subtype != "compact_boundary" || events[0].SessionID != "root" {
		t.Fatalf("system events %+v, want one compact_boundary under the entry's uuid %s", events, boundary.UUID)
	}
	// The stream-json line is shaped from this payload by the SDK's event
	// conversion and the output package, whose tests pin it.
	if c := events[0].Compact; c == nil || c.PreTokens != 12 || c.Trigger != "auto" {
		t.Errorf("compact payload %+v, want pre_tokens 12 and trigger auto", c)
	}

	compactions := 0
	for _, s := range observed {
		if s.Compaction {
			compactions++
		}
	}
	if compactions != 1 {
		t.Errorf("Observe saw %d compactions, want 1", compactions)
	}

	// The conversation goes on compacted, and a resume rebuilds exactly it.
	if conv.History()[0].Text() != summary.Text() {
		t.Errorf("history starts with %q, want the summary", conv.History()[0].Text())
	}
	resumed, msgs, err := m.Open(t.Context(), sess.Info.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Finish(t.Context(), session.StatusCompleted, llm.Usage{}, llm.Cost{}, 0)
	if diff := cmp.Diff(conv.History(), msgs); diff != "" {
		t.Errorf("resumed context (-in memory +resumed):\n%s", diff)
	}
}
