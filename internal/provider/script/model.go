package script

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"iter"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/llm"
)

// provider is the name the scripted model reports in its errors.
const provider = "script"

// Name returns "script:" and the scenario path as given.
func (m *Model) Name() string { return provider + ":" + m.file }

// attemptKey identifies one turn of one conversation. The first user
// message stands for the conversation: it is stable across retries and
// resumes, and it tells apart parallel children of the same agent that were
// given different prompts.
type attemptKey struct {
	agent  string
	turn   int
	prompt [sha256.Size]byte
}

// answer is a turn with its templates executed.
type answer struct {
	thinking, text string
	tools          []llm.Block // ids are assigned when emitted
}

// Stream answers req from the scenario: the turn is the number of assistant
// messages already in req.Messages, the script is req.Agent's (or "*"'s).
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		if req == nil {
			yield(llm.Event{}, m.badRequest("nil request"))
			return
		}
		agent := req.Agent
		if agent == "" {
			agent = "main"
		}
		read, _ := m.read(agent, req.Messages)
		t, err := m.lookup(agent, read.replies)
		if err == nil && t.choose != nil {
			t, err = m.pick(t, agent, read.replies, read.data)
		}
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if t.delay > 0 {
			if err := sleep(ctx, t.delay); err != nil {
				yield(llm.Event{}, err)
				return
			}
		}
		ans, err := m.render(t, agent, read.replies, read.data)
		if err != nil {
			yield(llm.Event{}, err)
			return
		}
		if t.fail != nil && m.failNow(agent, t, req.Messages) {
			m.emitFailure(ctx, yield, t.fail, ans)
			return
		}
		m.emit(ctx, yield, req, read, t, ans)
	}
}

// lookup finds the turn that answers a conversation of agent after index
// replies (counting those a context summary stands for).
func (m *Model) lookup(agent string, index int) (*turn, error) {
	turns, ok := m.agents[agent]
	via := ""
	if !ok {
		turns, ok = m.agents["*"]
		via = ` (scripted by "*")`
	}
	if !ok {
		return nil, m.badRequest(fmt.Sprintf("no script for agent %q and no \"*\" fallback (it scripts %s)", agent, m.agentNames()))
	}
	if last := turns[len(turns)-1]; index >= len(turns) && last.repeat {
		return last, nil
	}
	if index >= len(turns) {
		return nil, m.badRequest(fmt.Sprintf("agent %q%s has no turn %d (it scripts %d)", agent, via, index+1, len(turns)))
	}
	return turns[index], nil
}

func (m *Model) badRequest(msg string) error {
	return &llm.Error{Kind: llm.ErrBadRequest, Provider: provider, Message: "scenario " + m.file + ": " + msg}
}

// pick is the alternative of t that answers the conversation at index:
// the first whose when renders true.
func (m *Model) pick(t *turn, agent string, index int, d data) (*turn, error) {
	d.Agent, d.Turn = agent, index+1
	fail := func(line int, msg string) error {
		return m.badRequest(fmt.Sprintf("line %d: turn %d of agent %q: %s", line, index+1, t.agent, msg))
	}
	for _, alt := range t.choose {
		if alt.when == nil {
			return alt, nil
		}
		s, err := alt.when.render(&d)
		if err != nil {
			return nil, fail(alt.line, "when: "+err.Error())
		}
		switch strings.TrimSpace(s) {
		case "true":
			return alt, nil
		case "false":
			continue
		}
		// Not read as false: a typo would silently skip the alternative.
		return nil, fail(alt.line, "when rendered neither true nor false")
	}
	return nil, fail(t.line, "no alternative of choose applies")
}

func (m *Model) render(t *turn, agent string, index int, d data) (*answer, error) {
	d.Agent, d.Turn = agent, index+1
	fail := func(what string, err error) error {
		return m.badRequest(fmt.Sprintf("line %d: turn %d of agent %q: %s: %v", t.line, index+1, t.agent, what, err))
	}
	ans := &answer{}
	var err error
	if t.thinking != nil {
		if ans.thinking, err = t.thinking.render(&d); err != nil {
			return nil, fail("thinking", err)
		}
	}
	if t.text != nil {
		if ans.text, err = t.text.render(&d); err != nil {
			return nil, fail("text", err)
		}
	}
	for _, c := range t.tools {
		var b bytes.Buffer
		if c.input == nil {
			b.WriteString("{}")
		} else if err := renderJSON(&b, c.input, &d); err != nil {
			return nil, fail("tool_use "+c.name+" input", err)
		}
		ans.tools = append(ans.tools, llm.ToolUse("", c.name, json.RawMessage(b.Bytes())))
	}
	return ans, nil
}

// failNow counts an attempt at t in this conversation and reports whether
// it is one of the attempts scripted to fail.
func (m *Model) failNow(agent string, t *turn, msgs []llm.Message) bool {
	if !t.answers() {
		return true
	}
	key := attemptKey{agent: agent, turn: t.index}
	for _, msg := range msgs {
		if msg.Role == llm.RoleUser {
			raw, _ := json.Marshal(msg) // a Message always marshals
			key.prompt = sha256.Sum256(raw)
			break
		}
	}
	m.mu.Lock()
	n := m.attempts[key]
	m.attempts[key] = n + 1
	m.mu.Unlock()
	return n < t.fail.times
}

func (m *Model) emitFailure(ctx context.Context, yield func(llm.Event, error) bool, f *failure, ans *answer) {
	if f.kind == llm.ErrStreamCut {
		// Half the text arrives before the connection "drops", so callers
		// exercise what they do with a partial message.
		parts := chunks(ans.text)
		if len(parts) == 0 {
			parts = []string{"..."}
		}
		for _, p := range parts[:(len(parts)+1)/2] {
			if !send(ctx, yield, llm.Event{Type: llm.EventTextDelta, Delta: p}) {
				return
			}
		}
	}
	yield(llm.Event{}, &llm.Error{Kind: f.kind, Provider: provider, Message: f.message, RetryAfter: f.retryAfter})
}

func (m *Model) emit(ctx context.Context, yield func(llm.Event, error) bool, req *llm.Request, read reading, t *turn, ans *answer) {
	var content []llm.Block
	if ans.thinking != "" {
		for _, p := range chunks(ans.thinking) {
			if !send(ctx, yield, llm.Event{Type: llm.EventThinkingDelta, Index: len(content), Delta: p}) {
				return
			}
		}
		content = append(content, llm.Block{Type: llm.BlockThinking, Thinking: ans.thinking})
	}
	if ans.text != "" {
		for _, p := range chunks(ans.text) {
			if !send(ctx, yield, llm.Event{Type: llm.EventTextDelta, Index: len(content), Delta: p}) {
				return
			}
		}
		content = append(content, llm.Text(ans.text))
	}
	stop := llm.StopEndTurn
	for _, b := range ans.tools {
		b.ID = "toolu_" + randomHex(12)
		if !send(ctx, yield, llm.Event{Type: llm.EventToolUseStart, Index: len(content), ID: b.ID, Name: b.Name}) {
			return
		}
		content = append(content, b)
		stop = llm.StopToolUse
	}
	if content == nil {
		content = []llm.Block{}
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: content}
	usage := estimate(req.System, read, msg)
	if t.usage != nil {
		usage = *t.usage
	}
	send(ctx, yield, llm.Event{Type: llm.EventDone, Response: &llm.Response{
		ID:         "msg_script_" + randomHex(12),
		Model:      m.model,
		Message:    msg,
		StopReason: stop,
		Usage:      usage,
	}})
}

// send yields ev unless ctx is done, in which case it yields ctx's error.
// It reports whether the stream should go on.
func send(ctx context.Context, yield func(llm.Event, error) bool, ev llm.Event) bool {
	if err := ctx.Err(); err != nil {
		yield(llm.Event{}, err)
		return false
	}
	return yield(ev, nil)
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// chunks splits s into words, each keeping the whitespace after it, so the
// deltas join back to s exactly.
func chunks(s string) []string {
	var out []string
	start, inSpace := 0, false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if inSpace && !space {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func chars(blocks []llm.Block) int {
	n := 0
	for _, b := range blocks {
		switch b.Type {
		case llm.BlockText:
			n += utf8.RuneCountInString(b.Text)
		case llm.BlockThinking:
			n += utf8.RuneCountInString(b.Thinking)
		case llm.BlockToolUse:
			n += utf8.RuneCountInString(b.Name) + utf8.RuneCount(b.Input)
		case llm.BlockToolResult:
			n += chars(b.Content)
		}
	}
	return n
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// agentNames lists the scripted agents for messages.
func (m *Model) agentNames() string {
	names := make([]string, 0, len(m.agents))
	for n := range m.agents {
		names = append(names, fmt.Sprintf("%q", n))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
