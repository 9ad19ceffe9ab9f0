package runlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// LinkOutput makes output a second name of the transcript at transcript,
// reporting whether output now is that file (a continued agent's already
// is).
func LinkOutput(transcript, output string) bool {
	if err := os.MkdirAll(filepath.Dir(output), 0o700); err != nil {
		return false
	}
	err := os.Link(transcript, output)
	if errors.Is(err, fs.ErrExist) {
		a, aerr := os.Stat(transcript)
		b, berr := os.Stat(output)
		return aerr == nil && berr == nil && os.SameFile(a, b)
	}
	return err == nil
}

// OpenFile creates a task's output file, a plain-text log the model may
// Read while the run goes on.
func OpenFile(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("task output file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("task output file: %w", err)
	}
	return f, nil
}

// Message appends m's lines of the log to b: an assistant reply's
// (response) text and tool calls, or a user message's tool results and
// texts.
func Message(b *strings.Builder, m llm.Message, response bool) {
	if response {
		if text := strings.TrimSpace(m.Text()); text != "" {
			b.WriteString(text + "\n")
		}
		for _, u := range m.ToolUses() {
			fmt.Fprintf(b, "→ %s %s\n", u.Name, clip(string(u.Input), 300))
		}
		return
	}
	for _, c := range m.Content {
		switch c.Type {
		case llm.BlockToolResult:
			mark := "←"
			if c.IsError {
				mark = "← error:"
			}
			fmt.Fprintf(b, "%s %s\n", mark, clip(c.ResultText(), 300))
		case llm.BlockText:
			fmt.Fprintf(b, "[message] %s\n", c.Text)
		}
	}
}

// FromTranscript renders the log of the transcript data holds, if it is
// one (its first line a transcript entry): what the run logged as it went.
func FromTranscript(data []byte) (string, bool) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	if e, err := session.DecodeEntry(first); err != nil || e.SessionID == "" || e.Type == "" {
		return "", false
	}
	var entries []session.Entry
	for line := range bytes.Lines(data) {
		e, err := session.DecodeEntry(line)
		if err != nil {
			continue // a line cut off by a killed writer
		}
		entries = append(entries, e)
	}
	return FromEntries(entries), true
}

// FromEntries renders the log of a transcript's entries.
func FromEntries(entries []session.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		if e.Message == nil {
			continue // a marker
		}
		switch e.Type {
		case session.EntryAssistant:
			Message(&b, *e.Message, true)
		case session.EntryUser:
			Message(&b, *e.Message, false)
		}
	}
	return b.String()
}

// File is rec's output file as text: its log, rendered when the file is
// the run's transcript, and then, once the run ended, its status and result
// as a log file ends with them. A background command's is its output as
// it wrote it, and how it ended.
func File(rec task.Task) (string, error) {
	b, err := os.ReadFile(rec.OutputFile)
	if rec.Kind == task.KindLocalBash {
		if errors.Is(err, fs.ErrNotExist) {
			b, err = nil, nil
		}
		if err != nil {
			return "", fmt.Errorf("task %s: %w", rec.ID, err)
		}
		out := string(b)
		if rec.Status.Terminal() {
			out += fmt.Sprintf("\n[%s]\n", shelltask.Summary(rec.Description, rec))
		}
		return out, nil
	}
	if errors.Is(err, fs.ErrNotExist) && rec.Started.IsZero() {
		// A run gets its output file when it starts: one still waiting
		// for a place in the lane, or stopped while it waited, has none.
		return WithEnd(rec, ""), nil
	}
	if err != nil {
		return "", fmt.Errorf("task %s: %w", rec.ID, err)
	}
	log, ok := FromTranscript(b)
	if !ok {
		return string(b), nil
	}
	return WithEnd(rec, log), nil
}

// WithEnd is a rendered log ended, once the run ended, by its status and
// result.
func WithEnd(rec task.Task, log string) string {
	if rec.Status.Terminal() {
		log += fmt.Sprintf("\n[%s]\n%s\n", rec.Status, rec.Result)
	}
	return log
}

// Tail is the last n bytes of the log in the output file at path, or of
// the log rendered from it when it is the run's transcript; "" when it
// cannot be read.
func Tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if log, ok := FromTranscript(b); ok {
		b = []byte(log)
	}
	return Newest(string(b), n)
}

// Newest keeps the last n bytes of s, marking the cut.
func Newest(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// clip is s on one line, cut to n characters with "…" (prompt.Clip).
func clip(s string, n int) string { return prompt.Clip(s, n) }
