package control

import (
	"context"
	"errors"
	"iter"
	"sync"

	"github.com/cadre-dev/cadre"
)

// open starts the live session. Until the runtime has a conversation API
// of its own, each message is one Runtime.Run that resumes the session.
func open(ctx context.Context, rt *cadre.Runtime, rc RunConfig) (Conversation, error) {
	c := &runConversation{rt: rt, resume: rc.Resume, cont: rc.Continue, events: make(chan cadre.Event), wake: make(chan struct{}, 1)}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	go c.loop()
	return c, nil
}

type runConversation struct {
	rt     *cadre.Runtime
	ctx    context.Context
	cancel context.CancelFunc
	events chan cadre.Event
	wake   chan struct{}

	mu        sync.Mutex
	queue     []Input
	closed    bool
	sessionID string
	resume    string
	cont      bool
	turn      context.CancelFunc
}

func (c *runConversation) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

func (c *runConversation) Send(_ context.Context, in Input) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return errors.New("the conversation is closed")
	}
	c.queue = append(c.queue, in)
	c.poke()
	return nil
}

func (c *runConversation) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *runConversation) loop() {
	defer close(c.events)
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			closed := c.closed
			c.mu.Unlock()
			if closed {
				return
			}
			select {
			case <-c.wake:
				continue
			case <-c.ctx.Done():
				return
			}
		}
		in := c.queue[0]
		c.queue = c.queue[1:]
		req := cadre.Request{Prompt: in.Text, Resume: c.sessionID}
		if c.sessionID == "" {
			req.Resume, req.Continue = c.resume, c.cont
		}
		turnCtx, cancel := context.WithCancel(c.ctx)
		c.turn = cancel
		c.mu.Unlock()
		for ev, err := range c.rt.Run(turnCtx, req) {
			if err != nil {
				ev = cadre.Event{Type: cadre.EventResult, Subtype: cadre.ResultDuringExecution, SessionID: c.SessionID(),
					Result: &cadre.ResultInfo{IsError: true, Errors: []string{err.Error()}}}
			}
			if ev.SessionID != "" {
				c.mu.Lock()
				c.sessionID = ev.SessionID
				c.mu.Unlock()
			}
			select {
			case c.events <- ev:
			case <-c.ctx.Done():
			}
		}
		cancel()
	}
}

func (c *runConversation) Events() iter.Seq2[cadre.Event, error] {
	return func(yield func(cadre.Event, error) bool) {
		for ev := range c.events {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

func (c *runConversation) Interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn != nil {
		c.turn()
	}
}

func (c *runConversation) SetPermissionMode(string) error {
	return errors.New("changing the permission mode of a running session is not supported yet")
}

func (c *runConversation) SetModel(string) error {
	return errors.New("changing the model of a running session is not supported yet")
}

func (c *runConversation) Close() error {
	c.mu.Lock()
	c.closed = true
	c.poke()
	c.mu.Unlock()
	return nil
}

func (c *runConversation) Stop() error {
	c.cancel()
	return nil
}
