package script

import (
	"crypto/sha256"
	"fmt"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/llm"
)

// maxConversations bounds the conversations whose reading the model keeps;
// past it the memory is dropped and conversations are read again from
// their start, which is slower but gives the same answers.
const maxConversations = 256

// reading is what a call needs from a conversation's messages: the turn
// (replies so far), the template data and the characters for estimated
// usage. Each request repeats the whole conversation, so reading it afresh
// on every call made a conversation of n turns cost O(n²): a main agent
// answering 1,000 notifications spent its time in the script, not in
// cadre. The model keeps each conversation's reading of all but its newest
// message and, on the next call, reads only the messages added since.
type reading struct {
	replies int
	chars   int
	// prompted is set once the first user message was read.
	prompted bool
	data     data
}

// convReading is the kept reading of one conversation's first n messages.
type convReading struct {
	n int
	// anchor is the first block of message n-1 as the model saw it. The
	// loop passes the history's messages by value but shares their blocks,
	// so the same address on the next call means the same message, and the
	// n messages before it the same too (a conversation only grows at its
	// end; compaction replaces its messages, and with them their blocks).
	anchor *llm.Block
	r      reading
}

// convKey names a conversation: its agent and its first message, which is
// the prompt it was started with.
type convKey struct {
	agent string
	first [sha256.Size]byte
}

// read returns the reading of msgs, reusing what an earlier call of the
// same conversation read, and how many messages it had to read itself.
func (m *Model) read(agent string, msgs []llm.Message) (reading, int) {
	if len(msgs) == 0 {
		return reading{}, 0
	}
	key := convKey{agent: agent, first: sha256.Sum256([]byte(msgs[0].Text()))}
	// The newest message is not kept: the loop hands the model a copy of
	// it carrying the turn's per-turn context, so it is new every call.
	last := len(msgs) - 1

	var r reading
	from := 0
	m.mu.Lock()
	if c, ok := m.convs[key]; ok && c.n <= last && len(msgs[c.n-1].Content) > 0 && &msgs[c.n-1].Content[0] == c.anchor {
		r, from = c.r, c.n
	}
	m.mu.Unlock()
	for _, msg := range msgs[from:last] {
		r.add(msg)
	}
	if last > 0 && len(msgs[last-1].Content) > 0 {
		m.mu.Lock()
		if len(m.convs) >= maxConversations {
			clear(m.convs)
		}
		m.convs[key] = &convReading{n: last, anchor: &msgs[last-1].Content[0], r: r}
		m.mu.Unlock()
	}
	r.add(msgs[last])
	return r, len(msgs) - from
}

// add reads one more message.
func (r *reading) add(msg llm.Message) {
	r.chars += chars(msg.Content)
	switch {
	case msg.Role == llm.RoleAssistant:
		r.replies++
		return
	case msg.Role != llm.RoleUser:
		return
	case compact.IsSummary(msg):
		// A compacted conversation goes on where it was: the summary
		// stands for the replies it replaced.
		var n int
		if _, err := fmt.Sscanf(msg.Text(), `<context-summary replies="%d">`, &n); err == nil {
			r.replies += n
		}
	}
	text := msg.Text()
	if !r.prompted {
		r.data.Prompt, r.prompted = text, true
	}
	// A user message that only carries tool results is the loop talking,
	// not the user; .LastUserText skips it.
	if text != "" {
		r.data.LastUserText = text
	}
	var results []string
	for _, b := range msg.Content {
		if b.Type == llm.BlockToolResult {
			r.data.LastToolResult = b.ResultText()
			results = append(results, r.data.LastToolResult)
		}
	}
	if results != nil {
		r.data.ToolResults = results
	}
}

// estimate is the usage reported when the scenario gives none: about four
// characters a token, the rule of thumb for English text, and never 0 so
// that accounting code always has something to add up.
func estimate(system string, r reading, reply llm.Message) llm.Usage {
	in := utf8.RuneCountInString(system) + r.chars
	return llm.Usage{
		InputTokens:  int64(max(1, in/4)),
		OutputTokens: int64(max(1, chars(reply.Content)/4)),
	}
}
