package provider

import (
	"context"
	"errors"
	"iter"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// minSecret is the shortest value redacted: a shorter "key" (a test's
// "x") would blank out ordinary words in every message.
const minSecret = 8

// redacted replaces a model's keys in the errors its stream returns. A
// gateway or a proxy may echo the request's headers in an error body,
// and an error travels far: the run's result, the transcript, stream-json,
// trace spans, the parent's tool result.
type redacted struct {
	llm.Model
	secrets []string
}

// redact wraps m so that no error of its streams holds one of secrets.
func redact(m llm.Model, secrets []string) llm.Model {
	var keep []string
	for _, s := range secrets {
		if len(s) >= minSecret {
			keep = append(keep, s)
		}
	}
	if len(keep) == 0 {
		return m
	}
	return redacted{Model: m, secrets: keep}
}

func (m redacted) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		for ev, err := range m.Model.Stream(ctx, req) {
			if err != nil {
				err = m.scrubErr(err)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// scrubErr returns err itself when its text holds no secret, else an
// error of the same kind (so retries and messages still work) whose text
// has each secret replaced. The chain below is replaced by its text: an
// SDK error would give the key back to whoever unwraps it.
func (m redacted) scrubErr(err error) error {
	if !m.holds(err.Error()) {
		return err
	}
	var le *llm.Error
	if errors.As(err, &le) {
		out := *le
		out.Message = m.scrub(le.Message)
		if le.Err != nil {
			out.Err = errors.New(m.scrub(le.Err.Error()))
		}
		if m.holds(out.Error()) {
			// Error() was not the only place: the whole text, scrubbed.
			out.Message, out.Err = m.scrub(le.Error()), nil
		}
		return &out
	}
	return errors.New(m.scrub(err.Error()))
}

func (m redacted) holds(s string) bool {
	for _, k := range m.secrets {
		if strings.Contains(s, k) {
			return true
		}
	}
	return false
}

func (m redacted) scrub(s string) string {
	for _, k := range m.secrets {
		s = strings.ReplaceAll(s, k, "[redacted]")
	}
	return s
}
