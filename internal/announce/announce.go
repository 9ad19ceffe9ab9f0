package announce

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

// directive asks the child for its report.
//
//go:embed prompt.md
var directive string

// Directive is what the child is asked for its report.
func Directive() string { return strings.TrimSpace(directive) }

// Skip is the reply with which a child declines to announce.
const Skip = "ANNOUNCE_SKIP"

// Conversation is the child's session, which takes one more turn.
type Conversation interface {
	Turn(ctx context.Context, input ...llm.Message) *runner.Result
}

// Session names the child's session in the stats line.
type Session struct{ Key, ID, TranscriptPath string }

// Announce asks conv, whose run ended with res in status, for its report,
// and returns the announcement; skip is true when the child replied Skip:
// nothing is posted. Only a completed run is asked; the announce turn's
// usage and cost are added to res, part of the run's. runtime says how
// long the run has taken, asked once the report is in.
func Announce(ctx context.Context, conv Conversation, res *runner.Result, status task.Status, runtime func() time.Duration, sess Session) (text string, skip bool) {
	reply := ""
	if status == task.StatusCompleted && ctx.Err() == nil {
		turn := conv.Turn(ctx, llm.UserText(Directive()))
		if turn.Err == nil {
			reply = strings.TrimSpace(turn.Result)
		}
		res.Usage = res.Usage.Add(turn.Usage)
		res.Cost = res.Cost.Add(turn.Cost)
	}
	if reply == Skip {
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
		runtime().Round(time.Second), human(u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens), human(u.OutputTokens), human(u.Total()),
		res.Cost, sess.Key, sess.ID, sess.TranscriptPath)
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
