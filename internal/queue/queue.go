package queue

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Priority orders entries; a lower value is taken first.
type Priority int

const (
	Now   Priority = iota // ahead of everything
	Next                  // user input (the default)
	Later                 // notifications: never ahead of the user
)

// Mode says what an entry is.
type Mode string

const (
	ModePrompt       Mode = "prompt"
	ModeNotification Mode = "task-notification"
	ModeMessage      Mode = "message" // SendMessage to a running agent
	// ModeAgent runs an agent directly (the TUI's "@name text"): like a
	// prompt, it has a turn of its own.
	ModeAgent Mode = "agent"
	// ModeCompact compacts the agent's conversation now (the TUI's
	// /compact), in a turn of its own between the others.
	ModeCompact Mode = "compact"
	// ModeShell runs the user's own shell command (the TUI's "!command")
	// through the main agent's tool gates, in a turn of its own.
	ModeShell Mode = "shell"
)

// own reports whether an entry of mode m has a turn of its own.
func (m Mode) own() bool {
	return m == ModePrompt || m == ModeAgent || m == ModeCompact || m == ModeShell
}

// Messages are the messages of entries, in order.
func Messages(entries []Entry) []llm.Message {
	out := make([]llm.Message, len(entries))
	for i, e := range entries {
		out[i] = e.Message
	}
	return out
}

// Entry is one queued input.
type Entry struct {
	Priority Priority
	Mode     Mode
	// Target is the agent id that should take the entry; "" is the main
	// agent.
	Target  string
	Message llm.Message
	// TaskID links a notification to its task.
	TaskID string
	// UUID is the message's own id, when its sender gave one: the
	// transcript records the message under it.
	UUID string
	// Agent is the agent a ModeAgent entry runs; Message is its prompt.
	Agent    string
	Enqueued time.Time
	seq      uint64
}

// Queue is safe for concurrent use. The zero value is ready.
type Queue struct {
	mu sync.Mutex
	// entries are by target: an agent that looks for its own input must
	// not read everyone's (thousands of notifications can wait for a busy
	// main agent while each of its children looks for its own).
	entries map[string][]Entry
	seq     uint64
	changed chan struct{} // closed and replaced on every Push
}

func (q *Queue) signal() chan struct{} {
	if q.changed == nil {
		q.changed = make(chan struct{})
	}
	return q.changed
}

// Push adds e.
func (q *Queue) Push(e Entry) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.seq++
	e.seq = q.seq
	if e.Enqueued.IsZero() {
		e.Enqueued = time.Now()
	}
	if q.entries == nil {
		q.entries = map[string][]Entry{}
	}
	q.entries[e.Target] = append(q.entries[e.Target], e)
	close(q.signal())
	q.changed = make(chan struct{})
}

// Take removes and returns every entry for target, highest priority first,
// in order within a priority. It never blocks.
func (q *Queue) Take(target string) []Entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.take(target)
}

// TakeTurn removes and returns the input of target's next turn: the first
// entry by priority when it is a prompt or an agent run (one turn per user
// message), else every entry for target that is neither (the
// notifications and messages that wait, answered together). It never
// blocks.
func (q *Queue) TakeTurn(target string) []Entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	var first *Entry
	for i := range q.entries[target] {
		e := &q.entries[target][i]
		if first == nil || e.Priority < first.Priority || e.Priority == first.Priority && e.seq < first.seq {
			first = e
		}
	}
	switch {
	case first == nil:
		return nil
	case first.Mode.own():
		seq := first.seq
		return q.takeWhere(target, func(e Entry) bool { return e.seq == seq })
	}
	return q.takeWhere(target, func(e Entry) bool { return !e.Mode.own() })
}

// TakeInput removes and returns the entries for target that may join a
// turn in progress at a loop boundary: everything but prompts and agent
// runs, which wait for a turn of their own (TakeTurn).
func (q *Queue) TakeInput(target string) []Entry {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.takeWhere(target, func(e Entry) bool { return !e.Mode.own() })
}

// Changed is closed the next time an entry is pushed.
func (q *Queue) Changed() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.signal()
}

func (q *Queue) take(target string) []Entry {
	return q.takeWhere(target, nil)
}

func (q *Queue) takeWhere(target string, match func(Entry) bool) []Entry {
	// Filtered in place: a take that finds nothing, the common case
	// while many agents wait, allocates nothing.
	var out []Entry
	all := q.entries[target]
	keep := all[:0]
	for _, e := range all {
		if match == nil || match(e) {
			out = append(out, e)
		} else {
			keep = append(keep, e)
		}
	}
	clear(all[len(keep):]) // the taken entries' messages are the taker's now
	if len(keep) == 0 {
		delete(q.entries, target)
	} else {
		q.entries[target] = keep
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Priority != out[j].Priority {
			return out[i].Priority < out[j].Priority
		}
		return out[i].seq < out[j].seq
	})
	return out
}

// Wait blocks until there is at least one entry for target, or until ctx
// ends or stop is closed (nil stop never closes), and returns the entries
// as Take does. It returns no entries when it ended for ctx or stop.
func (q *Queue) Wait(ctx context.Context, target string, stop <-chan struct{}) ([]Entry, error) {
	for {
		q.mu.Lock()
		if out := q.take(target); len(out) > 0 {
			q.mu.Unlock()
			return out, nil
		}
		changed := q.signal()
		q.mu.Unlock()
		select {
		case <-changed:
		case <-stop:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Withdraw removes the notification entries of a task that are still
// waiting, and reports whether there were any: a result read by other means
// (a blocking TaskOutput) must not also arrive as a notification.
func (q *Queue) Withdraw(taskID string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	removed := false
	for target := range q.entries {
		n := len(q.takeWhere(target, func(e Entry) bool { return e.Mode == ModeNotification && e.TaskID == taskID }))
		removed = removed || n > 0
	}
	return removed
}

// Len counts the entries waiting for target.
func (q *Queue) Len(target string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.entries[target])
}
