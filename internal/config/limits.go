package config

import (
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/provider/guard"
)

// Limits is the settings' "limits" block: how much a model may make cadre
// wait for, and how much it may send. Zero values mean the defaults.
type Limits struct {
	// StreamFirstByteSeconds bounds the wait for a model's answer to begin
	// (default 300); StreamIdleSeconds the silence of a stream once it has
	// begun (default 180). Fractions of a second are allowed.
	StreamFirstByteSeconds float64 `json:"streamFirstByteSeconds"`
	StreamIdleSeconds      float64 `json:"streamIdleSeconds"`
	// MaxReplyBytes bounds a model reply's text, thinking and tool input
	// (default 8 MiB).
	MaxReplyBytes int64 `json:"maxReplyBytes"`
	// MaxToolInputBytes bounds one tool call's input (default 1 MiB).
	MaxToolInputBytes int64 `json:"maxToolInputBytes"`
}

// maxLimitSeconds caps the time limits: a stream silent for a day is dead,
// and larger values would overflow a time.Duration.
const maxLimitSeconds = 24 * 60 * 60

// Stream is the limits of model streams; zero fields mean the defaults.
func (l Limits) Stream() guard.Limits {
	return guard.Limits{
		FirstByte:     seconds(l.StreamFirstByteSeconds),
		Idle:          seconds(l.StreamIdleSeconds),
		MaxReplyBytes: l.MaxReplyBytes,
	}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func (l Limits) validate(bad func(key, format string, args ...any) error) error {
	for _, f := range []struct {
		key string
		v   float64
		def time.Duration
	}{
		{"limits.streamFirstByteSeconds", l.StreamFirstByteSeconds, guard.DefaultFirstByte},
		{"limits.streamIdleSeconds", l.StreamIdleSeconds, guard.DefaultIdle},
	} {
		if f.v < 0 || f.v > maxLimitSeconds {
			return bad(f.key, "want 0 (the default, %v) or more seconds, up to %d, got %v", f.def.Seconds(), maxLimitSeconds, f.v)
		}
	}
	for _, f := range []struct {
		key string
		v   int64
		def int64
	}{
		{"limits.maxReplyBytes", l.MaxReplyBytes, guard.DefaultMaxReplyBytes},
		{"limits.maxToolInputBytes", l.MaxToolInputBytes, loop.DefaultMaxToolInputBytes},
	} {
		if f.v < 0 {
			return bad(f.key, "want 0 (the default, %d) or more bytes, got %d", f.def, f.v)
		}
	}
	return nil
}

// BackgroundShell is the settings' "backgroundShell" block: background
// Bash commands (run_in_background). Zero values mean the defaults.
type BackgroundShell struct {
	// MaxOutputBytes bounds a background command's output file: past it,
	// the oldest output is dropped and a note at the top of the file says
	// how much (default 8 MiB, at least 1024).
	MaxOutputBytes int64 `json:"maxOutputBytes"`
}

// MinShellOutputBytes is the least backgroundShell.maxOutputBytes.
const MinShellOutputBytes = 1024

func (b BackgroundShell) validate(bad func(key, format string, args ...any) error) error {
	if b.MaxOutputBytes != 0 && b.MaxOutputBytes < MinShellOutputBytes {
		return bad("backgroundShell.maxOutputBytes", "want 0 (the default, 8 MiB) or at least %d bytes, got %d", MinShellOutputBytes, b.MaxOutputBytes)
	}
	return nil
}
