package runner

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/llm"
)

// partial turns a model's streaming events into the Anthropic Messages
// API's streaming events, the payload of Claude Code's stream_event lines
// (--include-partial-messages): message_start, then per content block
// content_block_start, its deltas and content_block_stop, then
// message_delta and message_stop. Every provider's stream is told this
// way, so a program that reads Claude Code's partial messages reads
// cadre's whatever the model.
//
// cadre's streams carry text and thinking deltas and the start of each
// tool call; a tool call's input arrives whole, as one input_json_delta
// when the reply is complete. It is used by one conversation's loop,
// which calls the model once at a time.
type partial struct {
	model   string
	emit    func(map[string]any)
	started bool
	open    map[int]string // content block index → its type
}

func (p *partial) event(ev llm.Event) {
	switch ev.Type {
	case llm.EventRetry:
		// The attempt's deltas are void: the retry starts a new message.
		p.started, p.open = false, nil
		return
	case llm.EventDone:
		p.done(ev.Response)
		return
	}
	p.start()
	switch ev.Type {
	case llm.EventTextDelta:
		p.block(ev.Index, map[string]any{"type": "text", "text": ""})
		p.delta(ev.Index, map[string]any{"type": "text_delta", "text": ev.Delta})
	case llm.EventThinkingDelta:
		p.block(ev.Index, map[string]any{"type": "thinking", "thinking": ""})
		p.delta(ev.Index, map[string]any{"type": "thinking_delta", "thinking": ev.Delta})
	case llm.EventToolUseStart:
		p.block(ev.Index, map[string]any{"type": "tool_use", "id": ev.ID, "name": ev.Name, "input": map[string]any{}})
	}
}

func (p *partial) start() {
	if p.started {
		return
	}
	p.started, p.open = true, map[int]string{}
	p.emit(map[string]any{"type": "message_start", "message": map[string]any{
		"id": "", "type": "message", "role": "assistant", "model": p.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": llm.Usage{},
	}})
}

func (p *partial) block(i int, cb map[string]any) {
	if _, ok := p.open[i]; ok {
		return
	}
	p.open[i] = cb["type"].(string)
	p.emit(map[string]any{"type": "content_block_start", "index": i, "content_block": cb})
}

func (p *partial) delta(i int, d map[string]any) {
	p.emit(map[string]any{"type": "content_block_delta", "index": i, "delta": d})
}

// done closes the message: each tool call's input, the open blocks, the
// stop reason and usage.
func (p *partial) done(r *llm.Response) {
	if r == nil {
		return
	}
	p.start()
	for i, b := range r.Message.Content {
		if b.Type != llm.BlockToolUse {
			continue
		}
		if _, ok := p.open[i]; !ok {
			p.block(i, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}})
		}
		input := b.Input
		if len(input) == 0 || !json.Valid(input) {
			input = json.RawMessage(`{}`)
		}
		p.delta(i, map[string]any{"type": "input_json_delta", "partial_json": string(input)})
	}
	idx := make([]int, 0, len(p.open))
	for i := range p.open {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		p.emit(map[string]any{"type": "content_block_stop", "index": i})
	}
	p.emit(map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.StopReason, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": r.Usage.OutputTokens}})
	p.emit(map[string]any{"type": "message_stop"})
	p.started, p.open = false, nil
}

// bareModel is a model's id without its provider, as Anthropic names it.
func bareModel(name string) string {
	if _, m, ok := strings.Cut(name, ":"); ok {
		return m
	}
	return name
}
