package replay

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Config sets a Model up.
type Config struct {
	Recording  *Recording
	Normalizer *Normalizer
	// FromTurn, when > 0, hands the root conversation to the live model
	// from that turn on (counting from 1); it needs SetLive.
	FromTurn int
	// Stop is called once, at the first divergence, when there is no live
	// model to go on with: it ends the replay (the runner cancels the run).
	Stop func()
}

// maxDivergences bounds what a long live continuation can collect; the
// first is the one that matters.
const maxDivergences = 100

// Model answers model calls from a Recording; see the package comment.
// It is safe for concurrent use, as subagents call it at the same time.
type Model struct {
	cfg  Config
	name string

	mu       sync.Mutex
	live     llm.Model
	claimed  map[*Conversation]bool
	replies  map[string][]reply // fingerprint of an emitted message → where it came from
	diverged map[*Conversation]bool
	turns    map[*Conversation]int // how many of its recorded turns were fed
	// changed is closed (and replaced) whenever turns, diverged or
	// stopped change: what a held turn waits on.
	changed     chan struct{}
	owner       map[*Turn]*Conversation // the run each fed turn belongs to
	divergences []Divergence
	stopped     bool
	fed, asked  int // recorded turns emitted; turns the live model answered
}

type reply struct {
	c    *Conversation
	turn int // index into c.Turns
}

// NewModel makes a replay model.
func NewModel(cfg Config) *Model {
	if cfg.Normalizer == nil {
		cfg.Normalizer = &Normalizer{}
	}
	name := "recorded"
	if ts := cfg.Recording.Root.Turns; len(ts) > 0 && ts[0].Model != "" {
		name = ts[0].Model
	}
	return &Model{
		cfg: cfg, name: name,
		claimed: map[*Conversation]bool{}, replies: map[string][]reply{}, diverged: map[*Conversation]bool{}, turns: map[*Conversation]int{}, changed: make(chan struct{}), owner: map[*Turn]*Conversation{},
	}
}

// SetLive sets the model that answers after a divergence (or from
// FromTurn); nil stops at the first divergence instead.
func (m *Model) SetLive(l llm.Model) {
	m.mu.Lock()
	m.live = l
	m.mu.Unlock()
}

// Name is "replay:" and the recorded model's name.
func (m *Model) Name() string { return "replay:" + m.name }

// Counts returns how many turns were fed from the recording and how many
// the live model answered.
func (m *Model) Counts() (fed, live int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fed, m.asked
}

// Divergences returns what differed, in the order it was found, and
// whether the replay was stopped at the first.
func (m *Model) Divergences() ([]Divergence, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.divergences), m.stopped
}

// Unstarted returns the recorded subagent runs the replay never started,
// for a replay that ran to its end without a divergence.
func (m *Model) Unstarted() []*Conversation {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Conversation
	for _, c := range m.cfg.Recording.All {
		if c != m.cfg.Recording.Root && !m.claimed[c] {
			out = append(out, c)
		}
	}
	return out
}

// Short returns a divergence for each recorded run the replay started but
// ended before its last recorded turn (one the live model did not take
// over), for a replay that ran to its end.
func (m *Model) Short() []Divergence {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Divergence
	for _, c := range m.cfg.Recording.All {
		n, started := m.turns[c]
		if !started || m.diverged[c] || n >= len(c.Turns) {
			continue
		}
		if c == m.cfg.Recording.Root && m.cfg.FromTurn > 0 {
			continue
		}
		out = append(out, Divergence{Kind: KindTurn, Agent: c.Agent, AgentID: c.SessionID, Turn: n + 1,
			Detail: fmt.Sprintf("the replayed run ended after turn %d; the recorded one went on to turn %d", n, len(c.Turns))})
	}
	return out
}

// Stream answers req with its conversation's recorded turn, or passes it to
// the live model.
func (m *Model) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		if req == nil {
			yield(llm.Event{}, &llm.Error{Kind: llm.ErrBadRequest, Provider: "replay", Message: "nil request"})
			return
		}
		t, live, err := m.route(req)
		if err == nil && t != nil {
			if err = m.hold(ctx, t); err != nil {
				yield(llm.Event{}, err)
				return
			}
		}
		switch {
		case err != nil:
			yield(llm.Event{}, err)
		case live != nil:
			for ev, err := range live.Stream(ctx, req) {
				if !yield(ev, err) || err != nil {
					return
				}
			}
		default:
			emit(ctx, yield, t)
		}
	}
}

// route finds req's conversation and turn, checks the results of the turn
// before, and returns the recorded turn to feed or the live model to ask.
func (m *Model) route(req *llm.Request) (*Turn, llm.Model, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil, nil, m.stopErr()
	}
	k := 0
	var last *llm.Message
	for i := range req.Messages {
		if req.Messages[i].Role == llm.RoleAssistant {
			k++
			last = &req.Messages[i]
		}
	}
	var c *Conversation
	if k == 0 {
		var d *Divergence
		c, d = m.claim(req)
		if d != nil {
			return m.diverge(*d, nil)
		}
	} else {
		r, ok := m.lookup(fingerprint(*last), k-1, agentOf(req))
		if !ok {
			// Its last reply was the live model's: it stays live.
			if m.live == nil {
				return nil, nil, &llm.Error{Kind: llm.ErrBadRequest, Provider: "replay", Message: fmt.Sprintf("agent %s: turn %d belongs to no recorded conversation", agentOf(req), k+1)}
			}
			m.asked++
			return nil, m.live, nil
		}
		c = r.c
		if !m.diverged[c] {
			if d := m.compare(c, k-1, req.Messages); d != nil {
				return m.diverge(*d, c)
			}
		}
	}
	if m.diverged[c] && m.live != nil {
		m.asked++
		return nil, m.live, nil
	}
	if c == m.cfg.Recording.Root && m.cfg.FromTurn > 0 && k+1 >= m.cfg.FromTurn && m.live != nil {
		m.asked++
		return nil, m.live, nil
	}
	if k >= len(c.Turns) {
		return m.diverge(Divergence{Kind: KindTurn, Agent: c.Agent, AgentID: c.SessionID, Turn: k + 1,
			Detail: fmt.Sprintf("the replay asked for turn %d; the recorded run ended after %d", k+1, len(c.Turns))}, c)
	}
	t := &c.Turns[k]
	m.owner[t] = c
	fp := fingerprint(t.Message)
	m.replies[fp] = append(m.replies[fp], reply{c, k})
	m.turns[c] = max(m.turns[c], k+1)
	m.fed++
	m.signal()
	return t, nil, nil
}

// maxHold bounds how long a background run's last turn waits for its
// parent (hold): a recording the replay cannot follow must not hang it.
const maxHold = 10 * time.Second

// hold delays the last turn of a background run until its parent has been
// fed the turns it had made when the recorded run's notification reached
// it: fed at once, a replayed run ends sooner than the recorded one did,
// and its notification would reach the parent a turn early.
func (m *Model) hold(ctx context.Context, t *Turn) error {
	m.mu.Lock()
	c := m.owner[t]
	m.mu.Unlock()
	if c == nil || c.NotifiedAfter == 0 || t != &c.Turns[len(c.Turns)-1] {
		return nil
	}
	parent, ok := m.cfg.Recording.Conversation(c.ParentID)
	if !ok {
		return nil
	}
	timer := time.NewTimer(maxHold)
	defer timer.Stop()
	for {
		m.mu.Lock()
		done := m.stopped || m.diverged[parent] || m.turns[parent] >= c.NotifiedAfter ||
			(parent == m.cfg.Recording.Root && m.cfg.FromTurn > 0 && m.live != nil)
		ch := m.changed
		m.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// signal wakes the held turns; m.mu is held.
func (m *Model) signal() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// lookup finds the conversation that was fed the message with fingerprint
// fp as its turn (an index), preferring one of agent's.
func (m *Model) lookup(fp string, turn int, agent string) (reply, bool) {
	var found reply
	ok := false
	for _, r := range m.replies[fp] {
		if r.turn != turn {
			continue
		}
		if !ok || (found.c.Agent != agent && r.c.Agent == agent) {
			found, ok = r, true
		}
	}
	return found, ok
}

// claim matches the first call of a conversation to a recorded one not yet
// claimed: by its prompt (the request's first message ends with it; the
// loop may put context before it), preferring the same agent type.
func (m *Model) claim(req *llm.Request) (*Conversation, *Divergence) {
	n := m.cfg.Normalizer
	prompt := ""
	if len(req.Messages) > 0 {
		prompt = n.Replayed(promptText(req.Messages[0]))
	}
	agent := agentOf(req)
	var match, sameAgent *Conversation
	for _, c := range m.cfg.Recording.All {
		if m.claimed[c] {
			continue
		}
		rp := n.Recorded(c.Prompt)
		if rp != "" && strings.HasSuffix(prompt, rp) {
			if match == nil || (match.Agent != agent && c.Agent == agent) {
				match = c
			}
		}
		if sameAgent == nil && c.Agent == agent {
			sameAgent = c
		}
	}
	if match != nil {
		m.claimed[match] = true
		if match != m.cfg.Recording.Root && match.Agent != agent && agent != "main" {
			return match, &Divergence{Kind: KindChild, Agent: agent, AgentID: match.SessionID, Turn: match.SpawnedBy.Turn,
				ToolUseID: match.SpawnedBy.ToolUseID, Tool: match.SpawnedBy.Tool, Recorded: match.Agent, Replayed: agent,
				Detail: fmt.Sprintf("the recorded run of this prompt was agent %s", match.Agent)}
		}
		return match, nil
	}
	d := &Divergence{Kind: KindChild, Agent: agent, Replayed: prompt, Detail: "a run the recording does not have (no recorded run of this agent with this prompt)"}
	if sameAgent != nil {
		m.claimed[sameAgent] = true
		d.AgentID, d.Recorded = sameAgent.SessionID, n.Recorded(sameAgent.Prompt)
		d.Turn, d.ToolUseID, d.Tool = sameAgent.SpawnedBy.Turn, sameAgent.SpawnedBy.ToolUseID, sameAgent.SpawnedBy.Tool
		d.Detail = "its prompt differs from the recorded one"
		d.Diff = Diff(d.Recorded, d.Replayed)
		return sameAgent, d
	}
	return nil, d
}

// compare checks the results of c's turn i, as they are in msgs, against
// the recorded ones, in call order.
func (m *Model) compare(c *Conversation, i int, msgs []llm.Message) *Divergence {
	n := m.cfg.Normalizer
	t := c.Turns[i]
	for _, use := range t.Message.ToolUses() {
		rec, recorded := t.Results[use.ID]
		if !recorded {
			continue // the recorded run was cut before it answered
		}
		got, ok := findResult(msgs, use.ID)
		d := Divergence{Kind: KindToolResult, Agent: c.Agent, AgentID: c.SessionID, Turn: i + 1, ToolUseID: t.RecordedID(use.ID), Tool: use.Name}
		if !ok {
			d.Detail = "the replay has no result for this call"
			return &d
		}
		d.Recorded, d.Replayed = n.Recorded(rec.ResultText()), n.Replayed(got.ResultText())
		switch {
		case d.Recorded != d.Replayed:
			d.Detail = "the result differs"
			d.Diff = Diff(d.Recorded, d.Replayed)
			return &d
		case rec.IsError != got.IsError:
			d.Detail = fmt.Sprintf("recorded is_error %v, replayed %v", rec.IsError, got.IsError)
			return &d
		}
	}
	return nil
}

// diverge records d; with a live model, c goes on live, else the replay
// stops.
func (m *Model) diverge(d Divergence, c *Conversation) (*Turn, llm.Model, error) {
	if len(m.divergences) < maxDivergences {
		m.divergences = append(m.divergences, d)
	}
	if m.live != nil {
		if c != nil {
			m.diverged[c] = true
			m.signal()
		}
		m.asked++
		return nil, m.live, nil
	}
	m.stopped = true
	m.signal()
	if m.cfg.Stop != nil {
		m.cfg.Stop()
	}
	return nil, nil, m.stopErr()
}

func (m *Model) stopErr() error {
	msg := "replay stopped"
	if len(m.divergences) > 0 {
		msg = "replay diverged: " + m.divergences[0].String()
	}
	return &llm.Error{Kind: llm.ErrBadRequest, Provider: "replay", Message: msg}
}

func agentOf(req *llm.Request) string {
	if req.Agent == "" {
		return "main"
	}
	return req.Agent
}

// findResult finds the newest tool_result answering id.
func findResult(msgs []llm.Message, id string) (llm.Block, bool) {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, b := range msgs[i].Content {
			if b.Type == llm.BlockToolResult && b.ToolUseID == id {
				return b, true
			}
		}
	}
	return llm.Block{}, false
}

// fingerprint names an assistant message the model emitted: its tool_use
// ids, which are unique to a recording, or its text when it has none.
func fingerprint(msg llm.Message) string {
	var ids []string
	for _, u := range msg.ToolUses() {
		ids = append(ids, u.ID)
	}
	if len(ids) > 0 {
		return "tools:" + strings.Join(ids, ",")
	}
	return "text:" + msg.Text()
}

// emit streams a recorded turn as a provider would: its text and thinking
// as deltas, its tool calls with their recorded ids, then the reply.
func emit(ctx context.Context, yield func(llm.Event, error) bool, t *Turn) {
	send := func(ev llm.Event) bool {
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return false
		}
		return yield(ev, nil)
	}
	msg := llm.Message{Role: llm.RoleAssistant, Content: slices.Clone(t.Message.Content)}
	stop := t.StopReason
	for i, b := range msg.Content {
		var ev llm.Event
		switch b.Type {
		case llm.BlockText:
			ev = llm.Event{Type: llm.EventTextDelta, Index: i, Delta: b.Text}
		case llm.BlockThinking:
			ev = llm.Event{Type: llm.EventThinkingDelta, Index: i, Delta: b.Thinking}
		case llm.BlockToolUse:
			ev = llm.Event{Type: llm.EventToolUseStart, Index: i, ID: b.ID, Name: b.Name}
			if stop == "" {
				stop = llm.StopToolUse
			}
		default:
			continue
		}
		if !send(ev) {
			return
		}
	}
	if stop == "" {
		stop = llm.StopEndTurn
	}
	id := t.MessageID
	if id == "" {
		id = "msg_replay"
	}
	send(llm.Event{Type: llm.EventDone, Response: &llm.Response{ID: id, Model: t.Model, Message: msg, StopReason: stop, Usage: t.Usage}})
}
