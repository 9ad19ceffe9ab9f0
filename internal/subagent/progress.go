package subagent

import (
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/progress"
	"github.com/cadre-dev/cadre/llm"
)

// summarizer is the progress summarizer of background run t (S-F3,
// internal/progress): its summaries run in t's group and are paid for by
// its tree.
func (s *Service) summarizer(t *liveTask, r *run, cfg loop.Config) *progress.Summarizer {
	return progress.New(progress.Config{
		TaskID: t.ID, Tasks: s.cfg.Tasks, Model: cfg.Model, History: r.history,
		Base:  llm.Request{System: cfg.System, Tools: cfg.Tools.Specs(), MaxTokens: cfg.MaxTokens, Agent: cfg.Agent + ":progress"},
		Every: s.cfg.ProgressEvery, Now: s.cfg.Now, Spent: s.spent(r.child.caller),
		Background: t.IsBackground, Go: t.Group().Go, Log: s.log,
	})
}
