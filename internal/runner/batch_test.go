package runner_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/event"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

// batchTranscripts keeps transcripts in memory through a sink that takes
// lines in batches (session.LinesSink), as a database's does, and counts
// its calls.
type batchTranscripts struct {
	mu      sync.Mutex
	lines   map[string][][]byte
	batches [][]string // the texts of each call's lines
	fail    error      // set: every call fails, keeping nothing
}

func (b *batchTranscripts) Locate(id string) string { return "batch:" + id }

func (b *batchTranscripts) Create(_ context.Context, id string, _ bool) (*session.Writer, error) {
	return session.NewWriter(b.Locate(id), batchSink{b, id}, ""), nil
}

func (b *batchTranscripts) Resume(context.Context, session.Info) (*session.Writer, []session.Entry, []string, error) {
	return nil, nil, nil, errors.New("not kept")
}

func (b *batchTranscripts) Read(_ context.Context, info session.Info) ([]session.Entry, []string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	entries, problems := session.DecodeLines(b.Locate(info.ID), b.lines[info.ID])
	return entries, problems, nil
}

func (b *batchTranscripts) Archive(_ context.Context, info session.Info, _ time.Time) (string, error) {
	return b.Locate(info.ID), nil
}

type batchSink struct {
	b  *batchTranscripts
	id string
}

func (s batchSink) AppendLine(line []byte) error { return s.AppendLines([][]byte{line}) }

func (s batchSink) AppendLines(lines [][]byte) error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if s.b.fail != nil {
		return s.b.fail
	}
	entries, _ := session.DecodeLines("", lines)
	var texts []string
	for _, e := range entries {
		texts = append(texts, e.Type+":"+e.Message.Text())
	}
	s.b.batches = append(s.b.batches, texts)
	s.b.lines[s.id] = append(s.b.lines[s.id], lines...)
	return nil
}

func (s batchSink) Close() error { return nil }

// TestTurnInputsInOneAppend: a turn's input messages (the notifications
// that queued up) reach a transcript store in one append, before any of
// them is published; when that append fails, none is published or joins
// the history, and the turn fails.
func TestTurnInputsInOneAppend(t *testing.T) {
	tr := &batchTranscripts{lines: map[string][][]byte{}}
	m := session.NewManagerWith(session.NewMem(), tr, nil, nil)
	sess, err := m.Create(t.Context(), session.Info{Agent: "main"})
	if err != nil {
		t.Fatal(err)
	}
	var bus event.Bus
	var problems []string
	sub := bus.Subscribe(func(e event.Event) bool {
		entries, _, _ := tr.Read(t.Context(), sess.Info)
		for _, en := range entries {
			if en.UUID == e.UUID {
				return true
			}
		}
		problems = append(problems, fmt.Sprintf("%s event %q published before it was saved", e.Type, e.Message.Text()))
		return true
	})
	spec := runner.Spec{Session: sess, Bus: &bus, Loop: loop.Config{Model: model("m", 0)}}
	conv := runner.Start(spec, nil)
	if res := conv.Turn(t.Context(), llm.UserText("prompt")); res.Err != nil {
		t.Fatal(res.Err)
	}
	if res := conv.Turn(t.Context(), llm.UserText("n1"), llm.UserText("n2"), llm.UserText("n3")); res.Err != nil {
		t.Fatal(res.Err)
	}
	want := [][]string{{"user:prompt"}, {"assistant:done"}, {"user:n1", "user:n2", "user:n3"}, {"assistant:done"}}
	if diff := cmp.Diff(want, tr.batches); diff != "" {
		t.Errorf("the sink's calls (-want +got):\n%s", diff)
	}

	tr.mu.Lock()
	tr.fail = errors.New("server gone")
	tr.mu.Unlock()
	res := conv.Turn(t.Context(), llm.UserText("n4"), llm.UserText("n5"))
	if !errors.Is(res.Err, tr.fail) {
		t.Errorf("a turn whose inputs could not be recorded: err %v, want the store's", res.Err)
	}
	for _, m := range res.Messages {
		if txt := m.Text(); txt == "n4" || txt == "n5" {
			t.Errorf("the unrecorded input %q joined the history", txt)
		}
	}
	if err := conv.Close(""); err != nil && !errors.Is(err, tr.fail) {
		t.Fatal(err)
	}
	sub.Close()
	var got []string
	for e := range sub.Events(t.Context()) {
		got = append(got, string(e.Type)+":"+e.Message.Text())
	}
	if diff := cmp.Diff([]string{"assistant:done", "user:n1", "user:n2", "user:n3", "assistant:done"}, got); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestInboxInOneAppend: the messages that join a running turn at a loop
// boundary (notifications arriving while it calls tools) reach the
// transcript store in one append too.
func TestInboxInOneAppend(t *testing.T) {
	tr := &batchTranscripts{lines: map[string][][]byte{}}
	m := session.NewManagerWith(session.NewMem(), tr, nil, nil)
	sess, err := m.Create(t.Context(), session.Info{Agent: "main"})
	if err != nil {
		t.Fatal(err)
	}
	inbox := []llm.Message{llm.UserText("m1"), llm.UserText("m2")}
	spec := runner.Spec{Session: sess, Loop: loop.Config{
		Model: model("m", 1), Tools: echoTools(t),
		Inbox: func() []llm.Message { m := inbox; inbox = nil; return m },
	}}
	res := runner.Run(t.Context(), spec, nil, llm.UserText("go"))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var got [][]string
	for _, b := range tr.batches {
		if len(b) > 0 && b[0] != "assistant:" && b[0] != "assistant:done" {
			got = append(got, b)
		}
	}
	want := [][]string{{"user:go"}, {"user:"}, {"user:m1", "user:m2"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the sink's calls, the model's replies left out (-want +got):\n%s", diff)
	}
}
