package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/jsonpart"
	"github.com/cadre-dev/cadre/llm"
)

// Format is an --output-format value.
type Format string

const (
	Text       Format = "text"
	JSON       Format = "json"
	StreamJSON Format = "stream-json"
)

// ParseFormat validates an --output-format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Text, JSON, StreamJSON:
		return f, nil
	}
	return "", fmt.Errorf("invalid --output-format %q: want text, json or stream-json", s)
}

// Writer renders events. Write is called for each event in order; Close
// after the last one. Errors writing are returned but callers only report
// them: a broken stdout must never stop a run.
type Writer interface {
	Write(e cadre.Event) error
	Close() error
}

// New returns the writer for f. Verbose includes subagents' messages in
// stream-json and turns json into an array of every message.
func New(w io.Writer, f Format, verbose bool) Writer {
	switch f {
	case StreamJSON:
		return &streamWriter{w: bufio.NewWriter(w), verbose: verbose}
	case JSON:
		return &jsonWriter{w: w, verbose: verbose}
	}
	return &textWriter{w: w}
}

// shown reports whether e belongs in the output: without verbose,
// subagents' messages stay quiet (S-O1).
func shown(e cadre.Event, verbose bool) bool {
	return verbose || e.ParentToolUseID == ""
}

type streamWriter struct {
	w       *bufio.Writer
	verbose bool
	state   stream
	// enc and line serve the lines written without encoding/json's
	// whole-value pass (systemLine).
	enc  *jsonpart.Encoder
	line bytes.Buffer
}

func (s *streamWriter) Write(e cadre.Event) error {
	lines := s.state.lines(e, shown(e, s.verbose))
	if len(lines) == 0 {
		return nil
	}
	if s.enc == nil {
		s.enc = jsonpart.New()
	}
	for _, l := range lines {
		if raw, ok := l.(rawLine); ok {
			if _, err := s.w.Write(raw); err != nil {
				return fmt.Errorf("write %s event: %w", e.Type, err)
			}
			continue
		}
		if sl, ok := l.(systemLine); ok {
			s.line.Reset()
			if err := sl.writeTo(&s.line, s.enc); err != nil {
				return fmt.Errorf("encode %s event: %w", e.Type, err)
			}
			s.line.WriteByte('\n')
			if _, err := s.w.Write(s.line.Bytes()); err != nil {
				return fmt.Errorf("write %s event: %w", e.Type, err)
			}
			continue
		}
		if u, ok := l.(userJSON); ok {
			if err := u.writeTo(s.w, s.enc); err != nil {
				return fmt.Errorf("encode %s event: %w", e.Type, err)
			}
			continue
		}
		if err := encode(s.w, l); err != nil {
			return fmt.Errorf("encode %s event: %w", e.Type, err)
		}
	}
	return s.w.Flush()
}

func (s *streamWriter) Close() error {
	// Changes still waiting for a line of another kind: the reader's last
	// list of background tasks must be the last one.
	if s.state.changed != nil {
		if _, err := s.w.Write(s.state.backgroundTasks(*s.state.changed)); err != nil {
			return fmt.Errorf("write background_tasks_changed: %w", err)
		}
		s.state.changed = nil
	}
	return s.w.Flush()
}

type jsonWriter struct {
	w       io.Writer
	verbose bool
	lines   []any
	result  any
	turns   turnUsage
}

func (j *jsonWriter) Write(e cadre.Event) error {
	e = j.turns.own(e)
	if e.Type == cadre.EventResult && e.ParentToolUseID == "" {
		j.result = Line(e)
	}
	// Stream events are for a reader of the stream; json is written at
	// the end.
	if j.verbose && shown(e, true) && e.Type != cadre.EventStreamEvent {
		j.lines = append(j.lines, Line(e))
	}
	return nil
}

func (j *jsonWriter) Close() error {
	var v any = j.result
	if j.verbose {
		v = j.lines
		if j.lines == nil {
			v = []any{}
		}
	}
	if v == nil {
		return nil
	}
	if err := encode(j.w, v); err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	return nil
}

// turnUsage makes each main result's usage its own turn's, as Claude
// Code's is: the runtime's results count every turn so far (their cost
// and modelUsage stay so, as Claude Code's do).
type turnUsage struct{ before llm.Usage }

func (t *turnUsage) own(e cadre.Event) cadre.Event {
	if e.Type != cadre.EventResult || e.ParentToolUseID != "" || e.Result == nil {
		return e
	}
	r := *e.Result
	all := r.Usage
	r.Usage = llm.Usage{
		InputTokens:              all.InputTokens - t.before.InputTokens,
		OutputTokens:             all.OutputTokens - t.before.OutputTokens,
		CacheReadInputTokens:     all.CacheReadInputTokens - t.before.CacheReadInputTokens,
		CacheCreationInputTokens: all.CacheCreationInputTokens - t.before.CacheCreationInputTokens,
	}
	t.before = all
	e.Result = &r
	return e
}

// encode writes v as one line of JSON. HTML escaping is off: the lines are
// read by programs, and "<task-notification>" should read as written.
func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

type textWriter struct {
	w      io.Writer
	result string
	ok     bool
}

func (t *textWriter) Write(e cadre.Event) error {
	if e.Type == cadre.EventResult && e.ParentToolUseID == "" && e.Result != nil && !e.Result.IsError {
		t.result, t.ok = e.Result.Result, true
	}
	return nil
}

func (t *textWriter) Close() error {
	if !t.ok {
		return nil
	}
	s := t.result
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	_, err := io.WriteString(t.w, s)
	return err
}
