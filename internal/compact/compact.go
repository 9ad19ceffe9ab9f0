package compact

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// Defaults for the zero values of Config.
const (
	DefaultWindow     int64   = 128000
	DefaultThreshold  float64 = 0.8
	DefaultKeepRecent int     = 6
)

// Tags delimiting a summary message's text.
const (
	OpenTag  = "<context-summary>"
	CloseTag = "</context-summary>"
)

//go:embed summary.md
var summaryNote string

//go:embed instructions.md
var instructions string

// Instructions is the directive for the forked run that writes a summary:
// what to keep so the work can go on from the summary alone.
func Instructions() string { return strings.TrimSpace(instructions) }

// ErrNothingToCompact is returned by Compact when every message is among the
// ones kept verbatim, or the only older message is itself a summary: a
// summary would save nothing.
var ErrNothingToCompact = errors.New("nothing older to summarise")

// Config says when and how much to compact. Its zero value is usable (see
// the defaults); settings fill it, and ForModel completes it for the model a
// session runs on.
type Config struct {
	// Window is the model's context window in tokens; 0 means
	// Window(model) (through ForModel), else DefaultWindow.
	Window int64
	// Threshold is the share of the window that triggers compaction, in
	// (0,1]; 0 means DefaultThreshold.
	Threshold float64
	// KeepRecent is how many messages at the end stay verbatim; 0 means
	// DefaultKeepRecent.
	KeepRecent int
}

// Validate reports a setting out of range.
func (c Config) Validate() error {
	switch {
	case c.Window < 0:
		return fmt.Errorf("compaction: window %d is negative; give the model's context window in tokens, or 0 for the known window of the model", c.Window)
	case c.Threshold < 0 || c.Threshold > 1:
		return fmt.Errorf("compaction: threshold %v must be a share of the window in (0,1], or 0 for %v", c.Threshold, DefaultThreshold)
	case c.KeepRecent < 0:
		return fmt.Errorf("compaction: keepRecent %d is negative; give how many recent messages to keep, or 0 for %d", c.KeepRecent, DefaultKeepRecent)
	}
	return nil
}

// ForModel returns c with every zero setting replaced by its default, the
// window by the known window of model (the provider's model id) when c has
// none.
func (c Config) ForModel(model string) Config {
	if c.Window == 0 {
		c.Window = Window(model)
	}
	c.Window = c.window()
	c.Threshold = c.threshold()
	c.KeepRecent = c.keepRecent()
	return c
}

func (c Config) window() int64 {
	if c.Window == 0 {
		return DefaultWindow
	}
	return c.Window
}

func (c Config) threshold() float64 {
	if c.Threshold == 0 {
		return DefaultThreshold
	}
	return c.Threshold
}

func (c Config) keepRecent() int {
	if c.KeepRecent == 0 {
		return DefaultKeepRecent
	}
	return c.KeepRecent
}

// Needed reports whether a context of size — input, cache read, cache
// write and output tokens: what the last response measured plus an
// estimate of the messages added since (loop.Measured.Context) — passes
// Threshold × Window.
func (c Config) Needed(size llm.Usage) bool {
	return float64(size.Total()) > c.threshold()*float64(c.window())
}

// Summarizer writes the summary of the messages being compacted. The
// runtime implements it with a forked model run given Instructions; it must
// not modify older.
type Summarizer func(ctx context.Context, older []llm.Message) (string, error)

// Compact replaces all but the last KeepRecent messages of msgs by one user
// message holding their summary, and returns the new history (the summary
// first) and the summary message. msgs is not modified.
//
// The kept part always starts after a user message, with an assistant
// message or with a user message that carries no tool result (a queued
// message, a notification): the split moves earlier until it does. So the
// new history starts with a user message (the summary), which is never
// merged into a kept message (the kept messages stay exactly as recorded,
// and the summary stays one message the transcript can mark), no tool_use
// is parted from its tool_result (results live in user messages, calls in
// the assistant message before them), and the older part ends with a user
// message, to which a forked summarizer can add its directive. A summary
// followed by a user message is two user messages in a row, as queued
// messages already are; providers take them so. Were the kept part to start
// only at an assistant message, a main agent that launched a thousand
// background agents in one turn and has their notifications queued would
// keep everything after its first message: a summary of one line, and a
// context as large as before.
//
// It returns ErrNothingToCompact when there is nothing older to summarise.
func Compact(ctx context.Context, c Config, msgs []llm.Message, summarize Summarizer) (history []llm.Message, summary llm.Message, err error) {
	if err := c.Validate(); err != nil {
		return nil, llm.Message{}, err
	}
	cut := split(msgs, c.keepRecent())
	older := msgs[:cut]
	if cut == 0 || cut == 1 && IsSummary(older[0]) {
		return nil, llm.Message{}, ErrNothingToCompact
	}
	text, err := summarize(ctx, append([]llm.Message(nil), older...))
	if err != nil {
		return nil, llm.Message{}, fmt.Errorf("compact: summarise %d older messages: %w", len(older), err)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, llm.Message{}, fmt.Errorf("compact: the summary of %d older messages is empty", len(older))
	}
	summary = SummaryOf(text, Replies(older))
	history = make([]llm.Message, 0, 1+len(msgs)-cut)
	history = append(history, summary)
	history = append(history, msgs[cut:]...)
	return history, summary, nil
}

// split returns the index of the first message kept verbatim: keep messages
// from the end, moved earlier to a message that may start the kept part
// (Compact); 0 when there is none.
func split(msgs []llm.Message, keep int) int {
	cut := max(len(msgs)-keep, 0)
	for cut > 0 && !(msgs[cut-1].Role == llm.RoleUser && startsKept(msgs[cut])) {
		cut--
	}
	return cut
}

// startsKept reports whether m may be the first kept message after a user
// message: an assistant message, or a user message with no tool result,
// whose call would be in the older part.
func startsKept(m llm.Message) bool {
	switch m.Role {
	case llm.RoleAssistant:
		return true
	case llm.RoleUser:
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult {
				return false
			}
		}
		return true
	}
	return false
}

// Summary returns the user message that stands for summarised turns.
func Summary(text string) llm.Message { return SummaryOf(text, 0) }

// SummaryOf records, in the tag, how many model replies the summary stands
// for (earlier summaries' included), so that a reader counting turns — the
// scripted model keys its answers by turn — still counts right.
func SummaryOf(text string, replies int) llm.Message {
	open := OpenTag
	if replies > 0 {
		open = fmt.Sprintf("<context-summary replies=\"%d\">", replies)
	}
	return llm.UserText(open + "\n" + strings.TrimSpace(summaryNote) + "\n\n" + text + "\n" + CloseTag)
}

// Replies counts the model replies msgs stand for: assistant messages, plus
// those a leading summary stands for.
func Replies(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		switch {
		case m.Role == llm.RoleAssistant:
			n++
		case IsSummary(m):
			var r int
			if _, err := fmt.Sscanf(m.Text(), `<context-summary replies="%d">`, &r); err == nil {
				n += r
			}
		}
	}
	return n
}

// IsSummary reports whether m is a summary message made by Summary.
func IsSummary(m llm.Message) bool {
	// The block itself, not m.Text(): that copies the text, and the one
	// block of a main agent's message may be megabytes of notifications.
	if m.Role != llm.RoleUser || len(m.Content) != 1 {
		return false
	}
	b := m.Content[0]
	return b.Type == llm.BlockText && !b.PerTurn && strings.HasPrefix(b.Text, strings.TrimSuffix(OpenTag, ">"))
}

// Hook adapts Compact to loop.Config.Compact: it compacts when c.Needed
// says the context the loop sized passed the threshold and there is
// something older to summarise, and otherwise leaves msgs alone (nil
// summary).
func Hook(c Config, summarize Summarizer) func(ctx context.Context, msgs []llm.Message, size llm.Usage) ([]llm.Message, *llm.Message, error) {
	return func(ctx context.Context, msgs []llm.Message, size llm.Usage) ([]llm.Message, *llm.Message, error) {
		if !c.Needed(size) {
			return msgs, nil, nil
		}
		history, summary, err := Compact(ctx, c, msgs, summarize)
		switch {
		case errors.Is(err, ErrNothingToCompact):
			return msgs, nil, nil
		case err != nil:
			return nil, nil, err
		}
		return history, &summary, nil
	}
}
