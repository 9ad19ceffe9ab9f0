package subagent

import (
	"context"
	_ "embed"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// Progress summaries of background runs (S-F3).

//go:embed prompts/progress.md
var progressPrompt string

// summarizer keeps a background run's conversation as it grows and now and
// then asks a forked run (S-F3) for a one-line progress summary, which goes
// to the task record for TaskList and cadre tasks. It never blocks the run:
// the summary is made in the group's goroutine, one at a time.
type summarizer struct {
	s     *Service
	t     *liveTask
	base  llm.Request // the run's system prompt and tools, for the shared prefix
	model llm.Model
	every time.Duration
	spent func(llm.Usage)

	mu       sync.Mutex
	msgs     []llm.Message
	last     time.Time
	inFlight bool
}

func (s *Service) newSummarizer(t *liveTask, r *run, cfg loop.Config) *summarizer {
	if s.cfg.ProgressEvery < 0 {
		return nil
	}
	return &summarizer{
		// The first summary comes after one interval too: a run shorter than
		// that needs none.
		s: s, t: t, model: cfg.Model, every: s.cfg.ProgressEvery, last: s.cfg.Now(), spent: s.spent(r.child.caller),
		base: llm.Request{System: cfg.System, Tools: cfg.Tools.Specs(), MaxTokens: cfg.MaxTokens, Agent: cfg.Agent + ":progress"},
		msgs: append([]llm.Message(nil), r.history...),
	}
}

// observe records a message and, when a summary is due, starts one.
func (z *summarizer) observe(ctx context.Context, st loop.Step) {
	if z == nil {
		return
	}
	z.mu.Lock()
	z.msgs = append(z.msgs, st.Message)
	now := z.s.cfg.Now()
	due := st.Response != nil && len(st.Message.ToolUses()) > 0 && !z.inFlight && now.Sub(z.last) >= z.every
	var snapshot []llm.Message
	if due {
		z.inFlight, z.last = true, now
		snapshot = append([]llm.Message(nil), z.msgs...)
	}
	z.mu.Unlock()
	if !due || !z.t.isBackground() {
		z.done()
		return
	}
	z.t.group.wg.Go(func() {
		defer z.done()
		req := z.base
		req.Messages = snapshot
		line, u, err := runner.RunForked(ctx, z.model, req, strings.TrimSpace(progressPrompt))
		z.spent(u)
		if err != nil || line == "" {
			return
		}
		if i := strings.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		_, err = z.s.cfg.Tasks.UpdateTask(context.WithoutCancel(ctx), z.t.id, func(rec *task.Task) error {
			if !rec.Status.Terminal() {
				rec.Progress = clip(line, 200)
			}
			return nil
		})
		if err != nil {
			z.s.log.WarnContext(ctx, "record a background task's progress summary", "task_id", z.t.id, "err", err)
		}
	})
}

func (z *summarizer) done() {
	z.mu.Lock()
	z.inFlight = false
	z.mu.Unlock()
}
