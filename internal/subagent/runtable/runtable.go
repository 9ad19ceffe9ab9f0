package runtable

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/ids"
)

// Table holds the runs in progress in this process, each a T, and the
// spawns' reservations. The zero Table is not ready: use New.
type Table[T any] struct {
	mu      sync.Mutex
	running map[string]*entry[T]
	// reserved holds what a spawn has checked but not yet launched, so
	// that two spawns in flight cannot both pass the same check.
	reserved map[string]bool
	// agentCalls holds, by agent id, the Agent call that first launched
	// each agent this process ran: a resumed agent's messages stay tagged
	// with it (a foreground agent has no task record to keep it). It
	// grows by one short entry per agent.
	agentCalls map[string]string
}

type entry[T any] struct {
	run        T
	root, name string
	// closing is set once the run takes no more messages: a message then
	// resumes the agent instead of being queued.
	closing bool
}

// New returns an empty Table.
func New[T any]() *Table[T] {
	return &Table[T]{running: map[string]*entry[T]{}, reserved: map[string]bool{}, agentCalls: map[string]string{}}
}

// Track adds run, with its id, its run tree's root session and its name
// ("" for none).
func (tb *Table[T]) Track(id, root, name string, run T) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.running[id] = &entry[T]{run: run, root: root, name: name}
}

// Untrack forgets run id.
func (tb *Table[T]) Untrack(id string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	delete(tb.running, id)
}

// Live returns the run with this id if it is in progress.
func (tb *Table[T]) Live(id string) (T, bool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	e, ok := tb.running[id]
	if !ok {
		var zero T
		return zero, false
	}
	return e.run, true
}

// Tree returns the runs of the run tree whose root session is root.
func (tb *Table[T]) Tree(root string) []T {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var out []T
	for _, e := range tb.running {
		if e.root == root {
			out = append(out, e.run)
		}
	}
	return out
}

// Reserve takes key unless it is taken, or unless a run with id (if not
// "") is in progress.
func (tb *Table[T]) Reserve(key, id string) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.reserved[key] || (id != "" && tb.running[id] != nil) {
		return false
	}
	tb.reserved[key] = true
	return true
}

// ReserveName takes a name for a spawn of the run tree root and returns
// the reservation's key: refused while a run of the tree (other than
// continuing, the agent being continued) has it and still takes messages,
// or another spawn is taking it. Between the reservation and the run being
// tracked, one of the two always holds the name.
func (tb *Table[T]) ReserveName(root, name, continuing string) (string, error) {
	key := "name\x00" + root + "\x00" + strings.ToLower(name)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.reserved[key] {
		return "", fmt.Errorf("the name %q is being given to another agent right now; pick another name", name)
	}
	for id, e := range tb.running {
		if e.root == root && id != continuing && strings.EqualFold(e.name, name) && !e.closing {
			return "", fmt.Errorf("the name %q is taken by agent %s, which is still running; pick another name or message it with SendMessage", name, id)
		}
	}
	tb.reserved[key] = true
	return key, nil
}

// Unreserve releases the reservations keys.
func (tb *Table[T]) Unreserve(keys []string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, k := range keys {
		delete(tb.reserved, k)
	}
}

// childKey is the prefix of a reservation for a child of the session.
func childKey(sessionID string) string { return "child\x00" + sessionID + "\x00" }

// ReserveChild takes one of limit places for a child of session and
// returns the reservation's key ("" when limit is not positive: no limit).
// active counts the session's children running; it is called under the
// table's lock, with the reservations not yet launched counted beside it.
func (tb *Table[T]) ReserveChild(session string, limit int, active func() int) (string, error) {
	if limit <= 0 {
		return "", nil
	}
	prefix := childKey(session)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	n := active()
	for k := range tb.reserved {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	if n >= limit {
		return "", fmt.Errorf("this agent already has %d active subagents, the most subagents.maxChildrenPerAgent allows; wait for one to finish", limit)
	}
	key := prefix + ids.New()
	tb.reserved[key] = true
	return key, nil
}

// Adopt calls add, which makes a launched child of session count as
// active, and ends the child's place reservation among keys in the same
// step, so that no other spawn counts it twice (reserved and active) or
// not at all. It returns the keys left: a new slice, as the caller may
// still hold the old one.
func (tb *Table[T]) Adopt(session string, keys []string, add func()) []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	add()
	prefix := childKey(session)
	var keep []string
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			delete(tb.reserved, k)
			continue
		}
		keep = append(keep, k)
	}
	return keep
}

// AgentCall is the Agent call that first launched agent id: named (the
// call a request names), else the one this process saw, else own.
func (tb *Table[T]) AgentCall(id, named, own string) string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	call := named
	if call == "" {
		call = tb.agentCalls[id]
	}
	if call == "" {
		call = own
	}
	tb.agentCalls[id] = call
	return call
}

// Queue calls push, under the lock Closing takes, when run id is in
// progress and still takes messages. It returns the run (found says it is
// in progress) and whether push was called.
func (tb *Table[T]) Queue(id string, push func()) (run T, found, queued bool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	e, ok := tb.running[id]
	if !ok {
		return run, false, false
	}
	if !e.closing {
		push()
	}
	return e.run, true, !e.closing
}

// Closing calls closed under the lock Queue takes and records what it
// returns: whether run id takes no more messages.
func (tb *Table[T]) Closing(id string, closed func() bool) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	c := closed()
	if e, ok := tb.running[id]; ok {
		e.closing = c
	}
}
