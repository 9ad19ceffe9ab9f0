package subagent

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/internal/runner"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/llm"
)

// The announce step (S-N2, subagents.announce: summarize).

//go:embed prompts/announce.md
var announcePrompt string

// announceSkip is the reply with which a child declines to announce.
const announceSkip = "ANNOUNCE_SKIP"

// announce is the gateway's announce step (S-N2): one more turn in the
// child's session asks it for a report to its requester, and the result is
// normalised to Status / Result / Notes and a stats line. Status comes from
// the runtime's outcome, never from the model's text. skip is true when
// the child replied ANNOUNCE_SKIP: nothing is posted.
func (s *Service) announce(ctx context.Context, conv *runner.Conversation, t *liveTask, r *run, res *runner.Result, status task.Status) (text string, skip bool) {
	reply := ""
	if status == task.StatusCompleted && ctx.Err() == nil {
		turn := conv.Turn(ctx, llm.UserText(strings.TrimSpace(announcePrompt)))
		if turn.Err == nil {
			reply = strings.TrimSpace(turn.Result)
		}
		// The announce turn is part of the run's cost.
		res.Usage = res.Usage.Add(turn.Usage)
		res.Cost = res.Cost.Add(turn.Cost)
	}
	if reply == announceSkip {
		return "", true
	}
	word := map[task.Status]string{task.StatusCompleted: "success", task.StatusFailed: "error", task.StatusTimeout: "timeout"}[status]
	if word == "" {
		word = "unknown"
	}
	if reply == "" {
		reply = "(not available)"
	}
	notes := "none"
	if res.Err != nil {
		notes = res.Err.Error()
	}
	u := res.Usage
	stats := fmt.Sprintf("runtime %s · tokens %s in / %s out / %s total · est. cost %s · session key %s · session id %s · transcript %s",
		s.cfg.Now().Sub(t.started).Round(time.Second), human(u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens), human(u.OutputTokens), human(u.Total()),
		res.Cost, r.sess.Info.Key, r.sess.Info.ID, r.sess.Info.TranscriptPath)
	return fmt.Sprintf("Status: %s\nResult: %s\nNotes: %s\n%s", word, reply, notes, stats), false
}

func human(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}
