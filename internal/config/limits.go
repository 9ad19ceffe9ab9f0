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
