package progress

import (
	"context"
	_ "embed"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// directive is what the forked call is asked, after the run's conversation.
//
//go:embed prompt.md
var directive string

// maxLine bounds the summary kept on the record, in characters.
const maxLine = 200

// Records is what a Summarizer needs of the task store.
type Records interface {
	UpdateTask(ctx context.Context, id string, fn func(*task.Task) error) (task.Task, error)
}

// Config is one run's summarizer: its task, its model call's settings and
// conversation so far, and how it runs its forked calls.
type Config struct {
	TaskID string
	Tasks  Records
	Model  llm.Model
	// Base holds the run's system prompt, tools and request settings, for
	// the prompt prefix it shares; Agent names the summaries' calls.
	Base llm.Request
	// History is the conversation the run starts from.
	History []llm.Message
	// Every is the least time between two summaries; negative: none.
	Every time.Duration
	Now   func() time.Time
	// Spent receives the usage of each summary's call.
	Spent func(llm.Usage)
	// Background reports whether the run is in the background now: only
	// then is a summary made.
	Background func() bool
	// Go runs a summary's call in a goroutine that the run's owner waits
	// for.
	Go  func(func())
	Log *slog.Logger
}

// Summarizer keeps a background run's conversation as it grows and now and
// then asks a forked run (S-F3) for a one-line progress summary, which goes
// to the task record. It never blocks the run: the summary is made in a
// goroutine of its own, one at a time. A nil *Summarizer does nothing.
type Summarizer struct {
	cfg Config

	mu       sync.Mutex
	msgs     []llm.Message
	last     time.Time
	inFlight bool
}

// New returns cfg's summarizer, or nil when summaries are off.
func New(cfg Config) *Summarizer {
	if cfg.Every < 0 {
		return nil
	}
	// The first summary comes after one interval too: a run shorter than
	// that needs none.
	return &Summarizer{cfg: cfg, last: cfg.Now(), msgs: append([]llm.Message(nil), cfg.History...)}
}

// Observe records a message and, when a summary is due, starts one.
func (z *Summarizer) Observe(ctx context.Context, st loop.Step) {
	if z == nil {
		return
	}
	z.mu.Lock()
	z.msgs = append(z.msgs, st.Message)
	now := z.cfg.Now()
	due := st.Response != nil && len(st.Message.ToolUses()) > 0 && !z.inFlight && now.Sub(z.last) >= z.cfg.Every
	var snapshot []llm.Message
	if due {
		z.inFlight, z.last = true, now
		snapshot = append([]llm.Message(nil), z.msgs...)
	}
	z.mu.Unlock()
	if !due || !z.cfg.Background() {
		z.done()
		return
	}
	z.cfg.Go(func() {
		defer z.done()
		req := z.cfg.Base
		req.Messages = snapshot
		line, u, err := runner.RunForked(ctx, z.cfg.Model, req, strings.TrimSpace(directive))
		z.cfg.Spent(u)
		if err != nil || line == "" {
			return
		}
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		_, err = z.cfg.Tasks.UpdateTask(context.WithoutCancel(ctx), z.cfg.TaskID, func(rec *task.Task) error {
			if !rec.Status.Terminal() {
				rec.Progress = clip(line, maxLine)
			}
			return nil
		})
		if err != nil {
			z.cfg.Log.WarnContext(ctx, "record a background task's progress summary", "task_id", z.cfg.TaskID, "err", err)
		}
	})
}

func (z *Summarizer) done() {
	z.mu.Lock()
	z.inFlight = false
	z.mu.Unlock()
}

// clip is s on one line, cut to n characters with "…" (prompt.Clip).
func clip(s string, n int) string { return prompt.Clip(s, n) }
