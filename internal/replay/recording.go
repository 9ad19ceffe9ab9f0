package replay

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/llm"
)

// Source reads recorded sessions. The runtime's store and transcripts
// implement it through a small adapter.
type Source interface {
	// Session returns the record of id.
	Session(ctx context.Context, id string) (session.Info, error)
	// Children returns the sessions id's agent started, oldest first.
	Children(ctx context.Context, id string) ([]session.Info, error)
	// Transcript returns the entries of a session's transcript.
	Transcript(ctx context.Context, info session.Info) ([]session.Entry, error)
}

// Conversation is one recorded agent run: a session of the tree.
type Conversation struct {
	SessionID string
	ParentID  string
	Agent     string // "main", or the subagent's type
	Cwd       string
	// Prompt is the text of the first user message; Prompts that of every
	// user message that started a run of the agent (the first and those
	// sent later in the conversation, not tool results or task
	// notifications).
	Prompt  string
	Prompts []string
	Turns   []Turn
	// SpawnedBy is the parent's Agent call that started this run, when
	// its result names the run (Turn counts from 1); zero for the root.
	SpawnedBy Call
	// NotifiedAfter is, for a background run whose task notification the
	// parent's transcript holds, how many turns the parent had made when
	// it arrived; 0 otherwise.
	NotifiedAfter int
	// notified maps the Agent call ids named by the task notifications in
	// this run's transcript to the number of its turns before each.
	notified map[string]int
}

// Call locates one tool call in a recording.
type Call struct {
	Turn      int
	ToolUseID string
	Tool      string
}

// Turn is one recorded model reply and what its tool calls returned.
type Turn struct {
	Message    llm.Message
	MessageID  string
	Model      string
	StopReason llm.StopReason
	Usage      llm.Usage
	// Results are the recorded tool_result blocks, by tool_use id.
	Results map[string]llm.Block
	// recordedIDs maps the tool_use ids of Message that Load renamed to
	// the recorded ones.
	recordedIDs map[string]string
}

// RecordedID returns the id a tool call has in the recorded transcript:
// Load renames ids the recording uses more than once (a model of the
// caller's that numbers its calls from 1 in every conversation), since a
// replay tells calls apart by id.
func (t *Turn) RecordedID(id string) string {
	if r, ok := t.recordedIDs[id]; ok {
		return r
	}
	return id
}

// Recording is a session tree as recorded: Root first, then every
// descendant, depth first in the order they were started.
type Recording struct {
	Root  *Conversation
	All   []*Conversation
	byID  map[string]*Conversation
	calls map[string]llm.Block // every recorded tool result, by tool_use id
}

// Conversation returns the recorded run with this session id.
func (r *Recording) Conversation(id string) (*Conversation, bool) {
	c, ok := r.byID[id]
	return c, ok
}

// Result returns the recorded result of the tool call with this id.
func (r *Recording) Result(toolUseID string) (llm.Block, bool) {
	b, ok := r.calls[toolUseID]
	return b, ok
}

// maxConversations bounds the tree a replay reads: a session tree is
// small, and a store that answers with a cycle must not loop.
const maxConversations = 10000

// Load reads the session rootID and every session under it.
func Load(ctx context.Context, src Source, rootID string) (*Recording, error) {
	info, err := src.Session(ctx, rootID)
	if err != nil {
		return nil, err
	}
	rec := &Recording{byID: map[string]*Conversation{}}
	var walk func(info session.Info) (*Conversation, error)
	walk = func(info session.Info) (*Conversation, error) {
		if _, seen := rec.byID[info.ID]; seen || len(rec.All) >= maxConversations {
			return nil, fmt.Errorf("session %s: the session tree repeats a session or is too large", info.ID)
		}
		entries, err := src.Transcript(ctx, info)
		if err != nil {
			return nil, fmt.Errorf("read the transcript of session %s: %w", info.ID, err)
		}
		c := conversationOf(info, entries)
		rec.byID[c.SessionID] = c
		rec.All = append(rec.All, c)
		kids, err := src.Children(ctx, info.ID)
		if err != nil {
			return nil, fmt.Errorf("list the subagents of session %s: %w", info.ID, err)
		}
		spawns := spawnCalls(c)
		for _, k := range kids {
			kc, err := walk(k)
			if err != nil {
				return nil, err
			}
			kc.SpawnedBy = spawns[kc.SessionID]
			if n, ok := c.notified[kc.SpawnedBy.ToolUseID]; ok && kc.SpawnedBy.ToolUseID != "" {
				kc.NotifiedAfter = n
			}
		}
		return c, nil
	}
	if rec.Root, err = walk(info); err != nil {
		return nil, err
	}
	rec.uniqueIDs()
	if len(rec.Root.Turns) == 0 {
		return nil, fmt.Errorf("session %s has no recorded model turn to replay", rootID)
	}
	return rec, nil
}

// uniqueIDs renames the tool_use ids that occur more than once in the
// recording (with their results) so that each call has its own.
func (r *Recording) uniqueIDs() {
	count := map[string]int{}
	for _, c := range r.All {
		for _, t := range c.Turns {
			for _, u := range t.Message.ToolUses() {
				count[u.ID]++
			}
		}
	}
	for ci, c := range r.All {
		for ti := range c.Turns {
			t := &c.Turns[ti]
			renamed := false
			content := slices.Clone(t.Message.Content)
			for bi, b := range content {
				if b.Type != llm.BlockToolUse || count[b.ID] < 2 {
					continue
				}
				id := fmt.Sprintf("%s_r%dt%d", b.ID, ci, ti)
				if t.recordedIDs == nil {
					t.recordedIDs = map[string]string{}
				}
				t.recordedIDs[id] = b.ID
				if res, ok := t.Results[b.ID]; ok {
					delete(t.Results, b.ID)
					res.ToolUseID = id
					t.Results[id] = res
				}
				content[bi].ID = id
				renamed = true
			}
			if renamed {
				t.Message.Content = content
			}
		}
	}
	r.calls = map[string]llm.Block{}
	for _, c := range r.All {
		for _, t := range c.Turns {
			for id, b := range t.Results {
				r.calls[id] = b
			}
		}
	}
}

// conversationOf reads a transcript's turns: each assistant entry starts
// one, and the tool results of the user entries after it are its results.
func conversationOf(info session.Info, entries []session.Entry) *Conversation {
	c := &Conversation{SessionID: info.ID, ParentID: info.ParentID, Agent: info.Agent, Cwd: info.Cwd}
	if c.Agent == "" {
		c.Agent = "main"
	}
	prompted := false
	for _, e := range entries {
		if e.Message == nil {
			continue
		}
		switch e.Type {
		case session.EntryUser:
			text := promptText(*e.Message)
			if !prompted {
				c.Prompt, prompted = text, true
			}
			if startsRun(*e.Message, text) {
				c.Prompts = append(c.Prompts, text)
			}
			for _, m := range notificationCall().FindAllStringSubmatch(text, -1) {
				if c.notified == nil {
					c.notified = map[string]int{}
				}
				if _, seen := c.notified[m[1]]; !seen {
					c.notified[m[1]] = len(c.Turns)
				}
			}
			for _, b := range e.Message.Content {
				if b.Type != llm.BlockToolResult {
					continue
				}
				for i := len(c.Turns) - 1; i >= 0; i-- {
					if hasToolUse(c.Turns[i].Message, b.ToolUseID) {
						c.Turns[i].Results[b.ToolUseID] = b
						break
					}
				}
			}
		case session.EntryAssistant:
			t := Turn{Message: *e.Message, MessageID: e.MessageID, Model: e.Model, StopReason: llm.StopReason(e.StopReason), Results: map[string]llm.Block{}}
			if e.Usage != nil {
				t.Usage = *e.Usage
			}
			c.Turns = append(c.Turns, t)
		}
	}
	return c
}

// startsRun reports whether a recorded user message is a prompt: text,
// no tool results, and not one of the messages the runtime itself sends
// (task notifications, which the replay's own runs send again).
func startsRun(m llm.Message, text string) bool {
	for _, b := range m.Content {
		if b.Type == llm.BlockToolResult {
			return false
		}
	}
	t := strings.TrimSpace(text)
	return t != "" && !strings.HasPrefix(t, "<task-notification>")
}

// promptText is the text of a user message, without the per-request
// context the loop adds (never recorded, but present in a request).
func promptText(m llm.Message) string {
	var parts []string
	for _, b := range m.Content {
		if b.Type == llm.BlockText && !b.PerTurn {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func hasToolUse(m llm.Message, id string) bool {
	for _, b := range m.Content {
		if b.Type == llm.BlockToolUse && b.ID == id {
			return true
		}
	}
	return false
}

// agentIDLine finds the child's id in an Agent call's result
// ("agentId: <id>", Claude Code's usage footer, which cadre writes too).
var agentIDLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`agentId: ([A-Za-z0-9_-]+)`) })

// notificationCall finds the Agent call a task notification is about.
var notificationCall = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`<task-notification>\s*<task-id>[^<]*</task-id>\s*<tool-use-id>([A-Za-z0-9_-]+)</tool-use-id>`)
})

// spawnCalls maps each child session id named in c's Agent call results to
// the call.
func spawnCalls(c *Conversation) map[string]Call {
	out := map[string]Call{}
	for i, t := range c.Turns {
		for _, use := range t.Message.ToolUses() {
			res, ok := t.Results[use.ID]
			if !ok {
				continue
			}
			if m := agentIDLine().FindStringSubmatch(res.ResultText()); m != nil {
				if _, dup := out[m[1]]; !dup {
					out[m[1]] = Call{Turn: i + 1, ToolUseID: use.ID, Tool: use.Name}
				}
			}
		}
	}
	return out
}
