package anthropic

import (
	"encoding/json"
	"fmt"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/cadre-dev/cadre/llm"
)

// params maps a provider-neutral request onto the Messages API.
//
// Prompt caching: the API caches the prefix up to each block marked with
// cache_control. cadre marks the system prompt, the last tool (which covers
// all tool definitions) and the last cacheable block of the last message,
// so the next call of the same conversation reads everything before its new
// turn from the cache; and a block the caller marked (llm.Block.Cache: the
// end of the prefix that forks of one conversation share), so every fork
// reads that prefix from the cache. That is at most the four breakpoints
// the API allows. Per-turn context (llm.Block.PerTurn) ends the last message
// and stays after its breakpoint: the next call, which no longer has it,
// still shares everything up to there.
func (m *Model) params(req *llm.Request) (sdk.MessageNewParams, error) {
	if req == nil {
		return sdk.MessageNewParams{}, badRequest("nil request")
	}
	model := req.Model
	if model == "" {
		model = m.model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = m.maxTokens
	}
	p := sdk.MessageNewParams{Model: sdk.Model(model), MaxTokens: maxTokens}

	if req.Thinking != nil && req.Thinking.BudgetTokens > 0 {
		budget := req.Thinking.BudgetTokens
		p.Thinking = sdk.ThinkingConfigParamOfEnabled(budget)
		// The API rejects a budget that does not leave room for the answer
		// (budget_tokens must be below max_tokens); rather than fail, give
		// the answer its usual allowance on top of the budget.
		if budget >= maxTokens {
			p.MaxTokens = budget + maxTokens
			if m.outputLimit > 0 && p.MaxTokens > m.outputLimit && budget < m.outputLimit {
				p.MaxTokens = m.outputLimit
			}
		}
	}
	// req.Temperature is not sent: API version 2026-10-21, which the SDK
	// speaks, rejects every sampling parameter (docs/models.md).
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System, CacheControl: sdk.NewCacheControlEphemeralParam()}}
	}

	if len(req.Tools) > 0 {
		tools, err := m.tools.Get(req.Tools, toolParams)
		if err != nil {
			return p, err
		}
		p.Tools = tools
	}

	var lastPerTurn []bool // of the last message's blocks as sent: per-turn context?
	var last []sdk.ContentBlockParamUnion
	for i, msg := range req.Messages {
		if msg.Role != llm.RoleUser && msg.Role != llm.RoleAssistant {
			return p, badRequest(fmt.Sprintf("message %d: unknown role %q (want user or assistant)", i, msg.Role))
		}
		content := make([]sdk.ContentBlockParamUnion, 0, len(msg.Content))
		skipEmpty := hasNonEmpty(msg.Content)
		for j, b := range msg.Content {
			if skipEmpty && b.Type == llm.BlockText && b.Text == "" {
				continue
			}
			cb, err := block(b)
			if err != nil {
				return p, badRequest(fmt.Sprintf("message %d, block %d: %v", i, j, err))
			}
			if b.Cache {
				if cc := cb.GetCacheControl(); cc != nil {
					*cc = sdk.NewCacheControlEphemeralParam()
				}
			}
			content = append(content, cb)
			if i == len(req.Messages)-1 {
				lastPerTurn = append(lastPerTurn, b.PerTurn)
			}
		}
		if msg.Role == llm.RoleUser {
			p.Messages = append(p.Messages, sdk.NewUserMessage(content...))
		} else {
			p.Messages = append(p.Messages, sdk.NewAssistantMessage(content...))
		}
		last = content
	}
	if len(last) > 0 {
		content := last
		for j := len(content) - 1; j >= 0; j-- {
			// Thinking blocks cannot carry cache_control, and per-turn
			// context must not: the breakpoint goes on the last block that
			// can.
			if lastPerTurn[j] {
				continue
			}
			if cc := content[j].GetCacheControl(); cc != nil {
				*cc = sdk.NewCacheControlEphemeralParam()
				break
			}
		}
	}
	return p, nil
}

// toolParams encodes a tool set as the API wants it, once per set (see
// Model.tools): the SDK then sends these bytes instead of encoding every
// definition by reflection on every request.
func toolParams(specs []llm.ToolSpec) ([]sdk.ToolUnionParam, error) {
	out := make([]sdk.ToolUnionParam, len(specs))
	for i, t := range specs {
		def := toolDef{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
		if len(def.InputSchema) == 0 {
			def.InputSchema = json.RawMessage(`{"type":"object"}`)
		}
		if !json.Valid(def.InputSchema) {
			return nil, badRequest(fmt.Sprintf("tool %q: input_schema is not valid JSON", t.Name))
		}
		if i == len(specs)-1 {
			def.CacheControl = &cacheControl{Type: "ephemeral"}
		}
		raw, err := json.Marshal(def)
		if err != nil {
			return nil, badRequest(fmt.Sprintf("tool %q: %v", t.Name, err))
		}
		param.SetJSON(raw, &out[i])
	}
	return out, nil
}

// toolDef is a custom tool of the Messages API as the SDK's ToolParam
// encodes it (the golden request body holds both to the same bytes), with
// the fields cadre sets. encoding/json encodes it in a fraction of the
// SDK's time, which counts on the first request of every process. The
// schema goes out byte for byte: a typed schema would drop keywords it does
// not model.
type toolDef struct {
	InputSchema  json.RawMessage `json:"input_schema"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

// hasNonEmpty reports whether blocks hold anything but empty text. Empty
// text blocks are left out of requests because the API rejects them ("text
// content blocks must be non-empty") and a model that answered only with a
// tool call can leave one behind; a message made only of empty text keeps
// them, so that the API's error names the real problem.
func hasNonEmpty(blocks []llm.Block) bool {
	for _, b := range blocks {
		if b.Type != llm.BlockText || b.Text != "" {
			return true
		}
	}
	return false
}

func block(b llm.Block) (sdk.ContentBlockParamUnion, error) {
	switch b.Type {
	case llm.BlockText:
		return sdk.ContentBlockParamUnion{OfText: &sdk.TextBlockParam{Text: b.Text}}, nil
	case llm.BlockThinking:
		// The signature proves the thinking is the model's own; it must go
		// back exactly as received or the API refuses the request.
		return sdk.ContentBlockParamUnion{OfThinking: &sdk.ThinkingBlockParam{Thinking: b.Thinking, Signature: b.Signature}}, nil
	case llm.BlockRedactedThinking:
		return sdk.ContentBlockParamUnion{OfRedactedThinking: &sdk.RedactedThinkingBlockParam{Data: b.Data}}, nil
	case llm.BlockToolUse:
		input := b.Input
		if len(input) == 0 {
			input = json.RawMessage(`{}`)
		}
		if !json.Valid(input) {
			return sdk.ContentBlockParamUnion{}, fmt.Errorf("tool_use %s (%s): input is not valid JSON", b.ID, b.Name)
		}
		return sdk.ContentBlockParamUnion{OfToolUse: &sdk.ToolUseBlockParam{ID: b.ID, Name: b.Name, Input: input}}, nil
	case llm.BlockToolResult:
		tr := &sdk.ToolResultBlockParam{ToolUseID: b.ToolUseID}
		if b.IsError {
			tr.IsError = param.NewOpt(true)
		}
		for k, c := range b.Content {
			if c.Type == llm.BlockText && c.Text == "" {
				continue
			}
			rc, err := resultContent(c)
			if err != nil {
				return sdk.ContentBlockParamUnion{}, fmt.Errorf("tool_result %s, content %d: %w", b.ToolUseID, k, err)
			}
			tr.Content = append(tr.Content, rc)
		}
		if len(tr.Content) == 1 && tr.Content[0].OfText != nil {
			// One text block goes as a plain string, as Claude Code sends
			// it: proxies that translate to other APIs pass a block array
			// on as its JSON text, and the model then reads
			// [{"text":"…"}] instead of the file.
			text := tr.Content[0].OfText.Text
			tr.Content = nil
			tr.SetExtraFields(map[string]any{"content": text})
		}
		return sdk.ContentBlockParamUnion{OfToolResult: tr}, nil
	case llm.BlockImage:
		img, err := image(b)
		if err != nil {
			return sdk.ContentBlockParamUnion{}, err
		}
		return sdk.ContentBlockParamUnion{OfImage: img}, nil
	}
	return sdk.ContentBlockParamUnion{}, fmt.Errorf("unsupported block type %q", b.Type)
}

func resultContent(b llm.Block) (sdk.ToolResultBlockParamContentUnion, error) {
	switch b.Type {
	case llm.BlockText:
		return sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: b.Text}}, nil
	case llm.BlockImage:
		img, err := image(b)
		if err != nil {
			return sdk.ToolResultBlockParamContentUnion{}, err
		}
		return sdk.ToolResultBlockParamContentUnion{OfImage: img}, nil
	}
	return sdk.ToolResultBlockParamContentUnion{}, fmt.Errorf("a tool result may hold text and images, not %q", b.Type)
}

func image(b llm.Block) (*sdk.ImageBlockParam, error) {
	if b.Source == nil || b.Source.Data == "" {
		return nil, fmt.Errorf("image without data")
	}
	if b.Source.Type != "" && b.Source.Type != "base64" {
		return nil, fmt.Errorf("image source type %q is not supported (want base64)", b.Source.Type)
	}
	return &sdk.ImageBlockParam{Source: sdk.ImageBlockParamSourceUnion{OfBase64: &sdk.Base64ImageSourceParam{
		Data:      b.Source.Data,
		MediaType: sdk.Base64ImageSourceMediaType(b.Source.MediaType),
	}}}, nil
}

// response converts the accumulated message into cadre's form.
func response(msg *sdk.Message) *llm.Response {
	content := make([]llm.Block, 0, len(msg.Content))
	for _, c := range msg.Content {
		switch c.Type {
		case "text":
			content = append(content, llm.Text(c.Text))
		case "thinking":
			content = append(content, llm.Block{Type: llm.BlockThinking, Thinking: c.Thinking, Signature: c.Signature})
		case "redacted_thinking":
			content = append(content, llm.Block{Type: llm.BlockRedactedThinking, Data: c.Data})
		case "tool_use":
			content = append(content, llm.ToolUse(c.ID, c.Name, append(json.RawMessage(nil), c.Input...)))
		}
		// Server-side tool blocks (web search and the like) are never
		// requested by cadre, so any other type is left out.
	}
	return &llm.Response{
		ID:         msg.ID,
		Model:      string(msg.Model),
		Message:    llm.Message{Role: llm.RoleAssistant, Content: content},
		StopReason: llm.StopReason(msg.StopReason),
		Usage: llm.Usage{
			InputTokens:              msg.Usage.InputTokens,
			OutputTokens:             msg.Usage.OutputTokens,
			CacheCreationInputTokens: msg.Usage.CacheCreationInputTokens,
			CacheReadInputTokens:     msg.Usage.CacheReadInputTokens,
		},
	}
}

func badRequest(msg string) *llm.Error {
	return &llm.Error{Kind: llm.ErrBadRequest, Provider: provider, Message: "cannot build request: " + msg}
}
