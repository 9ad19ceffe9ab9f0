package compact_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type readIn struct {
	Part int `json:"part"`
}

// reader returns a tool whose every result is about 500 tokens.
func reader(t *testing.T) *tool.Set {
	t.Helper()
	read := tool.New(tool.Info{Name: "Read", Description: "read a part", Access: tool.AccessRead, ConcurrencySafe: true},
		func(_ context.Context, _ tool.Env, in readIn) (tool.Result, error) {
			return tool.Text(fmt.Sprintf("part %d: %s", in.Part, strings.Repeat("lorem ", 330))), nil
		})
	s, err := tool.NewSet(read)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tokens is the fake model's token count: a quarter of the JSON bytes.
func tokens(v any) int64 {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return int64(len(b) / 4)
}

// reading is a fake model that reads parts 1..parts, one per call, then
// answers "done". It reports usage counted from each request (part of it as
// cache reads, as a provider with prompt caching does), checks each request
// is valid, and records each request's size in sizes.
func reading(t *testing.T, parts int, sizes *[]int64) *llm.ModelFunc {
	calls := 0
	return &llm.ModelFunc{ID: "fake:claude-sonnet-5-5", Func: func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		calls++
		if err := valid(req.Messages); err != nil {
			t.Errorf("call %d: invalid request: %v", calls, err)
		}
		in := tokens(req.System) + tokens(req.Messages)
		*sizes = append(*sizes, in)
		r := llm.Reply(llm.Text("done"))
		if calls <= parts {
			r = llm.Reply(llm.Text(fmt.Sprint("reading part ", calls)), llm.ToolUse(fmt.Sprint("toolu_", calls), "Read", json.RawMessage(fmt.Sprintf(`{"part":%d}`, calls))))
		}
		r.Usage = llm.Usage{InputTokens: in - in/2, CacheReadInputTokens: in / 2, OutputTokens: tokens(r.Message)}
		return r, nil
	}}
}

// TestLongConversationStaysInTheWindow drives a long tool-using conversation
// through the real loop and runner: without compaction its context outgrows
// the window; with the Hook it stays inside, every compaction is a boundary
// in the transcript, and the transcript resumes to exactly the compacted
// context.
func TestLongConversationStaysInTheWindow(t *testing.T) {
	const parts = 40
	cfg := compact.Config{Window: 20000, Threshold: 0.5, KeepRecent: 4}.ForModel("claude-sonnet-5-5")

	// Control: the same conversation, uncompacted, does not fit.
	var full []int64
	if _, err := loop.Run(t.Context(), loop.Config{Model: reading(t, parts, &full), Tools: reader(t)}, []llm.Message{llm.UserText("read every part")}); err != nil {
		t.Fatal(err)
	}
	if peak := maxOf(full); peak <= cfg.Window {
		t.Fatalf("the uncompacted conversation peaks at %d tokens, inside the %d-token window: the test proves nothing", peak, cfg.Window)
	}

	idx := session.NewMem()
	m := session.NewManager(idx, filepath.Join(t.TempDir(), "sessions"), nil, nil)
	sess, err := m.Create(t.Context(), session.Info{Agent: "main"})
	if err != nil {
		t.Fatal(err)
	}
	var bus event.Bus
	boundaries := bus.Subscribe(func(e event.Event) bool { return e.Subtype == "compact_boundary" })
	var summaries []string
	summarize := func(ctx context.Context, older []llm.Message) (string, error) {
		if older[len(older)-1].Role != llm.RoleUser {
			t.Errorf("the older part ends with a %s message", older[len(older)-1].Role)
		}
		s := fmt.Sprintf("Summary %d: %d messages, the parts read so far.", len(summaries)+1, len(older))
		summaries = append(summaries, s)
		return s, nil
	}
	var sizes []int64
	spec := runner.Spec{
		Session: sess, Bus: &bus, Tag: runner.Tag{RootSessionID: sess.Info.ID},
		Loop: loop.Config{Model: reading(t, parts, &sizes), Tools: reader(t), Compact: compact.Hook(cfg, summarize)},
	}
	conv := runner.Start(spec, nil)
	res := conv.Turn(t.Context(), llm.UserText("read every part"))
	if res.Err != nil || res.Result != "done" || len(res.Warnings) > 0 {
		t.Fatalf("run: err %v, result %q, warnings %q", res.Err, res.Result, res.Warnings)
	}
	if err := conv.Close(""); err != nil {
		t.Fatal(err)
	}
	boundaries.Close()

	if len(sizes) != parts+1 {
		t.Fatalf("%d model calls, want %d", len(sizes), parts+1)
	}
	if peak := maxOf(sizes); peak > cfg.Window {
		t.Errorf("a request of %d tokens exceeds the %d-token window; sizes %v", peak, cfg.Window, sizes)
	}
	t.Logf("full peak %d, sizes %v, %d summaries", maxOf(full), sizes, len(summaries))
	if len(summaries) < 2 {
		t.Fatalf("%d compactions, want several in %d turns", len(summaries), parts+1)
	}

	// Every compaction is a boundary in the transcript and on the bus.
	entries, problems, err := session.ReadTranscript(sess.Info.TranscriptPath)
	if err != nil || len(problems) > 0 {
		t.Fatalf("read transcript: %v %v", err, problems)
	}
	var saved []string
	for _, e := range entries {
		if e.Type == session.EntrySummary && e.Subtype == session.SubtypeCompactBoundary {
			saved = append(saved, e.UUID)
			var b session.CompactBoundary
			if err := json.Unmarshal(e.Data, &b); err != nil || b.Trigger != "auto" || b.PreTokens <= int64(cfg.Threshold*float64(cfg.Window)) {
				t.Errorf("boundary data %s: %v", e.Data, err)
			}
		}
	}
	var published []string
	for e := range boundaries.Events(t.Context()) {
		published = append(published, e.UUID)
	}
	if len(saved) != len(summaries) {
		t.Errorf("%d boundaries in the transcript, %d compactions", len(saved), len(summaries))
	}
	if diff := cmp.Diff(saved, published); diff != "" {
		t.Errorf("published boundaries differ from the saved ones (-saved +published):\n%s", diff)
	}

	// The transcript resumes from the last summary to the very context the
	// run ended with, and the session goes on from there.
	history := session.Messages(entries)
	if diff := cmp.Diff(conv.History(), history); diff != "" {
		t.Fatalf("resumed context (-in memory +from the transcript):\n%s", diff)
	}
	if !compact.IsSummary(history[0]) || !strings.Contains(history[0].Text(), summaries[len(summaries)-1]) {
		t.Errorf("the resumed context starts with %q, want the last summary", history[0].Text())
	}
	resumed, msgs, err := m.Open(t.Context(), sess.Info.ID)
	if err != nil {
		t.Fatal(err)
	}
	var after []int64
	next := runner.Run(t.Context(), runner.Spec{Session: resumed, Loop: loop.Config{Model: reading(t, 0, &after)}}, msgs, llm.UserText("anything else?"))
	if next.Err != nil || next.Result != "done" {
		t.Fatalf("resumed run: err %v, result %q", next.Err, next.Result)
	}
	if after[0] > cfg.Window/2 || !compact.IsSummary(next.Messages[0]) {
		t.Errorf("resumed request of %d tokens starting with %q", after[0], next.Messages[0].Text())
	}
}

func maxOf(xs []int64) int64 {
	var m int64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
