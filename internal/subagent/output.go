package subagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/shelltask"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// A run's output is a plain-text log of what it does: its text, its tool
// calls (→) and their results (←), the messages it is sent. While a run is
// in this process, readers get the log from memory (liveTask.outputTail).
//
// Its output file is the one the launch text names for the model to Read
// (S-L5). A run started in the background writes no log file: its output
// file is a second name (a hard link) of its transcript, so a child leaves
// one file, and the model reading it sees the transcript, as Claude Code's
// readers see theirs (its output file links to the transcript too). A
// reader in another process gets the log rendered from it (tail, Output).
// A run moved to the background after it started, or where the link
// cannot be made (another filesystem), writes a log file as before.

// linkOutput makes output a second name of the transcript at transcript,
// reporting whether output now is that file (a continued agent's already
// is).
func linkOutput(transcript, output string) bool {
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

// logMessage appends m's lines of the log to b: an assistant reply's
// (response) text and tool calls, or a user message's tool results and
// texts.
func logMessage(b *strings.Builder, m llm.Message, response bool) {
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

// transcriptLog renders the log of the transcript data holds, if it is
// one (its first line a transcript entry): what the run logged as it went.
func transcriptLog(data []byte) (string, bool) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	var e session.Entry
	if json.Unmarshal(first, &e) != nil || e.SessionID == "" || e.Type == "" {
		return "", false
	}
	var entries []session.Entry
	for line := range bytes.Lines(data) {
		var e session.Entry
		if json.Unmarshal(line, &e) != nil {
			continue // a line cut off by a killed writer
		}
		entries = append(entries, e)
	}
	return entriesLog(entries), true
}

// entriesLog renders the log of a transcript's entries.
func entriesLog(entries []session.Entry) string {
	var b strings.Builder
	for _, e := range entries {
		if e.Message == nil {
			continue // a marker
		}
		switch e.Type {
		case session.EntryAssistant:
			logMessage(&b, *e.Message, true)
		case session.EntryUser:
			logMessage(&b, *e.Message, false)
		}
	}
	return b.String()
}

// transcriptLog renders the log of the transcript of child session id,
// wherever the sessions keep it.
func (s *Service) transcriptLog(ctx context.Context, id string) (string, error) {
	info, err := s.cfg.Index.GetSession(ctx, id)
	if err != nil {
		return "", err
	}
	entries, _, err := s.cfg.Sessions.ReadTranscript(ctx, info)
	if err != nil {
		return "", err
	}
	return entriesLog(entries), nil
}

// Output is rec's output as text (`cadre tasks output`, the SDK's
// TaskOutput): the log of its run, from its output file or, when a store
// keeps its transcript (no output file), from that transcript, so that any
// node sharing the store shows it.
func (s *Service) Output(ctx context.Context, rec task.Task) (string, error) {
	if rec.OutputFile != "" || rec.ChildSessionID == "" {
		return Output(rec)
	}
	log, err := s.transcriptLog(ctx, rec.ChildSessionID)
	if err != nil {
		return "", fmt.Errorf("task %s: %w", rec.ID, err)
	}
	return withEnd(rec, log), nil
}

// Output is rec's output file as text: its log, rendered when the file is
// the run's transcript, and then, once the run ended, its status and result
// as a log file ends with them (finish).
func Output(rec task.Task) (string, error) {
	b, err := os.ReadFile(rec.OutputFile)
	if rec.Kind == task.KindLocalBash {
		// A command's output, as it wrote it, and how it ended.
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
		return withEnd(rec, ""), nil
	}
	if err != nil {
		return "", fmt.Errorf("task %s: %w", rec.ID, err)
	}
	log, ok := transcriptLog(b)
	if !ok {
		return string(b), nil
	}
	return withEnd(rec, log), nil
}

// withEnd is a rendered log ended, once the run ended, by its status and
// result.
func withEnd(rec task.Task, log string) string {
	if rec.Status.Terminal() {
		log += fmt.Sprintf("\n[%s]\n%s\n", rec.Status, rec.Result)
	}
	return log
}
