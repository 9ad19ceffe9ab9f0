package llm

import (
	"context"
	"iter"
)

// ModelFunc is a Model backed by a function: a zero-latency test double and
// the simplest way to plug a custom model into cadre. It streams the reply
// as one text delta followed by EventDone.
type ModelFunc struct {
	ID   string // Name(); "func:model" when empty
	Func func(ctx context.Context, req *Request) (*Response, error)
}

// Name implements Model.
func (m *ModelFunc) Name() string {
	if m.ID == "" {
		return "func:model"
	}
	return m.ID
}

// Stream implements Model.
func (m *ModelFunc) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(Event{}, err)
			return
		}
		resp, err := m.Func(ctx, req)
		if err != nil {
			yield(Event{}, err)
			return
		}
		if resp == nil {
			yield(Event{}, &Error{Kind: ErrOther, Message: "ModelFunc returned neither a response nor an error"})
			return
		}
		if resp.Message.Role == "" {
			resp.Message.Role = RoleAssistant
		}
		if resp.StopReason == "" {
			resp.StopReason = StopEndTurn
			if len(resp.Message.ToolUses()) > 0 {
				resp.StopReason = StopToolUse
			}
		}
		if t := resp.Message.Text(); t != "" {
			if !yield(Event{Type: EventTextDelta, Delta: t}, nil) {
				return
			}
		}
		yield(Event{Type: EventDone, Response: resp}, nil)
	}
}

// Reply returns a Response holding blocks; a convenience for ModelFunc.
func Reply(blocks ...Block) *Response {
	return &Response{ID: "msg_test", Model: "test", Message: Message{Role: RoleAssistant, Content: blocks}}
}
