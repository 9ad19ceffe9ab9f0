package cadre

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/internal/app"
	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/subagent/stop"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/view"
)

// What a front end needs to inspect and steer a conversation's subagents:
// OpenClaw's /subagents list|stop|log|info|send and /stop, for the TUI, the
// SDK and a server alike.

// What front ends show of a conversation's subagents (package view),
// under the SDK's names.
type (
	// SubagentRun is one subagent run of a conversation's tree, at any
	// depth.
	SubagentRun = view.SubagentRun
	// SubagentDetails is /subagents info: the run, its session and its
	// cleanup setting.
	SubagentDetails = view.SubagentDetails
	// LogMessage is one message of a subagent's log.
	LogMessage = view.LogMessage
)

// Log limits, as OpenClaw's /subagents log has them.
const (
	DefaultLogLimit = view.DefaultLogLimit
	MaxLogLimit     = view.MaxLogLimit
)

// Subagents lists the subagent runs of the conversation's tree, running
// and finished, numbered in start order (SubagentRun.Index). A resumed
// conversation lists its earlier runs first, from the store.
func (c *Conversation) Subagents(ctx context.Context) ([]SubagentRun, error) {
	live := c.sr.caller.Group.Runs()
	here := map[string]bool{}
	for _, r := range live {
		here[r.ID] = true
	}
	earlier, err := c.r.app.StoredRuns(ctx, c.target, here)
	if err != nil {
		return nil, err
	}
	out := earlier
	for _, r := range live {
		out = append(out, app.RunOf(r))
	}
	for i := range out {
		out[i].Index = i + 1
	}
	return out, nil
}

// FindSubagent resolves a /subagents target as OpenClaw does: "#N" or N
// (the run's Index), "last" (the newest), a session key, a name, an id, or
// a unique prefix of an id.
func (c *Conversation) FindSubagent(ctx context.Context, target string) (SubagentRun, error) {
	runs, err := c.Subagents(ctx)
	if err != nil {
		return SubagentRun{}, err
	}
	return view.FindRun(runs, target)
}

// StopSubagent stops the run target names (FindSubagent), with every run
// it started, transitively; "all" or "*" stops every running subagent of
// the conversation. It returns the ids stopped, once they have ended.
func (c *Conversation) StopSubagent(ctx context.Context, target string) ([]string, error) {
	if t := strings.TrimSpace(target); t == "all" || t == "*" {
		return stop.All(ctx, c.r.app.Subagents, c.target)
	}
	run, err := c.FindSubagent(ctx, target)
	if err != nil {
		return nil, err
	}
	ids, err := stop.Tree(ctx, c.r.app.Subagents, c.target, run.ID)
	if err != nil {
		return nil, fmt.Errorf("stop subagent #%d (%s): %w", run.Index, run.ID, err)
	}
	return ids, nil
}

// Abort is OpenClaw's /stop: it stops the turn in progress and every
// running subagent of the conversation, background ones included, and
// returns once they have ended. The conversation goes on; messages queued
// meanwhile wait for the next turns. It returns the subagents stopped.
func (c *Conversation) Abort(ctx context.Context) ([]string, error) {
	c.Interrupt()
	return stop.All(ctx, c.r.app.Subagents, c.target)
}

// SendSubagent gives text to the run target names, with SendMessage's
// meaning: queued for a running agent, which reads it after its current
// step; a finished one is resumed in the background with it. The reply
// says which happened.
func (c *Conversation) SendSubagent(ctx context.Context, target, text string) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the message is empty")
	}
	run, err := c.FindSubagent(ctx, target)
	if err != nil {
		return "", err
	}
	return c.r.app.Subagents.SendMessage(ctx, c.sr.caller, run.ID, text)
}

// SubagentInfo is /subagents info: the run target names, its session and
// its cleanup setting.
func (c *Conversation) SubagentInfo(ctx context.Context, target string) (SubagentDetails, error) {
	run, err := c.FindSubagent(ctx, target)
	if err != nil {
		return SubagentDetails{}, err
	}
	d := SubagentDetails{SubagentRun: run, SessionID: run.ID, ArchiveAfterMinutes: c.r.app.Cfg.Settings.Subagents.ArchiveAfter()}
	if info, err := c.r.app.DB.GetSession(ctx, run.ID); err == nil {
		d.TranscriptPath, d.Created, d.CostUSD = info.TranscriptPath, info.Created, info.CostUSD
	} else if !errors.Is(err, session.ErrNotFound) {
		return SubagentDetails{}, err
	}
	if rec, err := c.r.app.DB.GetTask(ctx, run.ID); err == nil {
		d.Prompt, d.OutputFile, d.CostUSD = rec.Prompt, rec.OutputFile, rec.CostUSD
		d.Created = cmp.Or(d.Created, rec.Created)
	} else if !errors.Is(err, task.ErrNotFound) {
		return SubagentDetails{}, err
	}
	d.Cleanup = c.r.app.Subagents.Cleanup()
	for _, r := range c.sr.caller.Group.Runs() {
		if r.ID == run.ID {
			d.Prompt = cmp.Or(d.Prompt, r.Prompt)
			d.Cleanup = cmp.Or(r.Cleanup, d.Cleanup)
		}
	}
	if d.Prompt == "" {
		// A foreground run of an earlier process left no record of its
		// task but its transcript, which opens with it.
		if _, entries, err := c.r.Session(ctx, run.ID); err == nil {
			for _, e := range entries {
				if e.Type == "user" && e.Message != nil {
					d.Prompt = e.Message.Text()
					break
				}
			}
		}
	}
	return d, nil
}

// SubagentLog is /subagents log: the last limit messages (0 means
// DefaultLogLimit, at most MaxLogLimit) of the run target names, read from
// its transcript, with its tool calls and results when tools is set.
// Messages left with no text are skipped.
func (c *Conversation) SubagentLog(ctx context.Context, target string, limit int, tools bool) (SubagentRun, []LogMessage, error) {
	switch {
	case limit < 0:
		return SubagentRun{}, nil, fmt.Errorf("log limit must be positive, got %d", limit)
	case limit == 0:
		limit = DefaultLogLimit
	case limit > MaxLogLimit:
		limit = MaxLogLimit
	}
	run, err := c.FindSubagent(ctx, target)
	if err != nil {
		return SubagentRun{}, nil, err
	}
	_, entries, err := c.r.Session(ctx, run.ID)
	if err != nil {
		return run, nil, fmt.Errorf("log of subagent #%d: %w", run.Index, err)
	}
	var out []LogMessage
	for _, e := range entries {
		if e.Message == nil || (e.Type != "user" && e.Type != "assistant") {
			continue
		}
		if text := view.LogText(*e.Message, tools); text != "" {
			out = append(out, LogMessage{Role: e.Type, Time: e.Timestamp, Text: text})
		}
	}
	if len(out) > limit {
		out = out[len(out)-limit:]
	}
	return run, out, nil
}
