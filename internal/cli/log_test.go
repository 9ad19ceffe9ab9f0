package cli

import (
	"bytes"
	"errors"
	"log/slog"
	"testing"
)

func TestLoggerWritesOneCadreLinePerRecord(t *testing.T) {
	for _, tc := range []struct {
		name  string
		debug bool
		log   func(l *slog.Logger)
		want  string
	}{
		{"warning", false, func(l *slog.Logger) { l.Warn("agents: reviewer.md:3: unknown field") }, "cadre: warning: agents: reviewer.md:3: unknown field\n"},
		{"attrs quoted as text", false, func(l *slog.Logger) {
			l.Error("save the session", "session", "s1", "err", errors.New("disk full"))
		}, "cadre: error: save the session session=s1 err=\"disk full\"\n"},
		{"debug hidden", false, func(l *slog.Logger) { l.Debug("run started"); l.Info("hello") }, ""},
		{"debug shown", true, func(l *slog.Logger) { l.Debug("run started", "n", 2) }, "cadre: debug: run started n=2\n"},
		{"with attrs and group", false, func(l *slog.Logger) {
			l.With("task", "t1").WithGroup("usage").Warn("update failed", "tokens", 5)
		}, "cadre: warning: update failed task=t1 usage.tokens=5\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			tc.log(newLogger(&b, tc.debug))
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
}
