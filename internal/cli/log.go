package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// newLogger is the CLI's logger: one line per record on w,
// "cadre: warning: message key=value …", at Warn and above, or at Debug
// and above with --debug. The prefix is the one cadre's other messages on
// standard error carry, so scripts that grep for "cadre: warning:" keep
// working.
func newLogger(w io.Writer, debug bool) *slog.Logger {
	level := slog.LevelWarn
	if debug {
		level = slog.LevelDebug
	}
	h := &lineHandler{out: w, level: level, mu: &sync.Mutex{}, buf: &bytes.Buffer{}}
	// The attributes are written by a text handler, which quotes and
	// groups them as slog users expect; the line's head is ours.
	h.attrs = slog.NewTextHandler(h.buf, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && (a.Key == slog.TimeKey || a.Key == slog.LevelKey || a.Key == slog.MessageKey) {
				return slog.Attr{}
			}
			return a
		},
	})
	return slog.New(h)
}

type lineHandler struct {
	out   io.Writer
	level slog.Level
	attrs slog.Handler // writes the attributes into buf

	mu  *sync.Mutex // guards buf and out, shared by derived handlers
	buf *bytes.Buffer
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *lineHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.buf.Reset()
	// The time is left out: these lines are for a person watching one
	// run as it happens.
	bare := slog.NewRecord(time.Time{}, r.Level, "", r.PC)
	r.Attrs(func(a slog.Attr) bool { bare.AddAttrs(a); return true })
	if err := h.attrs.Handle(ctx, bare); err != nil {
		return err
	}
	var line strings.Builder
	line.WriteString("cadre: ")
	line.WriteString(levelWord(r.Level))
	line.WriteString(": ")
	line.WriteString(r.Message)
	if a := strings.TrimSpace(h.buf.String()); a != "" {
		line.WriteString(" ")
		line.WriteString(a)
	}
	line.WriteString("\n")
	_, err := io.WriteString(h.out, line.String())
	return err
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = h.attrs.WithAttrs(as)
	return &c
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.attrs = h.attrs.WithGroup(name)
	return &c
}

func levelWord(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "error"
	case l >= slog.LevelWarn:
		return "warning"
	case l >= slog.LevelInfo:
		return "info"
	}
	return "debug"
}
