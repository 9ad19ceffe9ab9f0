package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/cadre-dev/cadre/llm"
)

// errorPrefix starts the content of a tool message whose tool_result failed:
// Chat Completions has no is_error flag, so the model learns it from the
// text.
const errorPrefix = "Error: "

// params maps an llm.Request onto chat completion parameters.
func (m *Model) params(req *llm.Request) (openai.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = m.model
	}
	p := openai.ChatCompletionNewParams{
		Model: shared.ChatModel(model),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{
			IncludeUsage: openai.Bool(true),
		},
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, msg := range req.Messages {
		mapped, err := mapMessage(msg)
		if err != nil {
			return p, m.errorf(llm.ErrBadRequest, fmt.Errorf("message %d (%s): %w", i, msg.Role, err))
		}
		p.Messages = append(p.Messages, mapped...)
	}
	if len(req.Tools) > 0 {
		tools, err := m.tools.Get(req.Tools, toolParams)
		if err != nil {
			return p, m.errorf(llm.ErrBadRequest, err)
		}
		p.Tools = tools
	}
	if req.MaxTokens > 0 {
		// The official API has deprecated max_tokens (reasoning models
		// reject it); compatible servers mostly know nothing else.
		if m.custom {
			p.MaxTokens = openai.Int(req.MaxTokens)
		} else {
			p.MaxCompletionTokens = openai.Int(req.MaxTokens)
		}
	}
	if req.Temperature != nil {
		p.Temperature = openai.Float(*req.Temperature)
	}
	if e := effort(req.Thinking, model, m.custom); e != "" {
		p.ReasoningEffort = e
	}
	return p, nil
}

// effort maps a thinking budget onto the official API's reasoning_effort,
// for the reasoning models that take it (o-series, gpt-5, gpt-6). Compatible
// servers get nothing: many reject parameters they do not know.
func effort(t *llm.Thinking, model string, custom bool) shared.ReasoningEffort {
	if t == nil || t.BudgetTokens <= 0 || custom {
		return ""
	}
	reasoning := false
	for _, p := range []string{"o1", "o3", "o4", "gpt-5", "gpt-6"} {
		if strings.HasPrefix(model, p) {
			reasoning = true
		}
	}
	switch {
	case !reasoning:
		return ""
	case t.BudgetTokens < 4096:
		return shared.ReasoningEffortLow
	case t.BudgetTokens < 16384:
		return shared.ReasoningEffortMedium
	}
	return shared.ReasoningEffortHigh
}

// mapMessage maps one llm.Message onto one or more chat messages.
func mapMessage(msg llm.Message) ([]openai.ChatCompletionMessageParamUnion, error) {
	switch msg.Role {
	case llm.RoleUser:
		return mapUser(msg.Content)
	case llm.RoleAssistant:
		return []openai.ChatCompletionMessageParamUnion{mapAssistant(msg.Content)}, nil
	}
	return nil, fmt.Errorf("unknown role %q", msg.Role)
}

// mapUser maps a user turn. Its tool_result blocks become tool messages, in
// order and first, because they must directly follow the assistant message
// that made the calls; text and images follow as one user message. Images a
// tool returned (tool messages carry only text) come in a user message of
// their own after the tool messages. Per-turn context (llm.Block.PerTurn)
// comes last, in a user message of its own: the next request, which no
// longer has it, then repeats every earlier message byte for byte, and the
// provider's automatic prefix caching keeps serving them.
func mapUser(blocks []llm.Block) ([]openai.ChatCompletionMessageParamUnion, error) {
	var out []openai.ChatCompletionMessageParamUnion
	var toolImages []openai.ChatCompletionContentPartUnionParam
	var parts []openai.ChatCompletionContentPartUnionParam
	var perTurn []string
	texts := 0
	for _, b := range blocks {
		if b.PerTurn {
			perTurn = append(perTurn, b.Text)
			continue
		}
		switch b.Type {
		case llm.BlockToolResult:
			text := b.ResultText()
			if b.IsError && !strings.HasPrefix(strings.ToLower(text), "error") {
				text = errorPrefix + text
			}
			out = append(out, openai.ToolMessage(text, b.ToolUseID))
			var images []openai.ChatCompletionContentPartUnionParam
			for _, c := range b.Content {
				if c.Type == llm.BlockImage {
					part, err := imagePart(c)
					if err != nil {
						return nil, fmt.Errorf("tool_result %s: %w", b.ToolUseID, err)
					}
					images = append(images, part)
				}
			}
			if len(images) > 0 {
				toolImages = append(toolImages, openai.TextContentPart("Images returned by tool call "+b.ToolUseID+":"))
				toolImages = append(toolImages, images...)
			}
		case llm.BlockText:
			parts = append(parts, openai.TextContentPart(b.Text))
			texts++
		case llm.BlockImage:
			part, err := imagePart(b)
			if err != nil {
				return nil, err
			}
			parts = append(parts, part)
		default:
			// thinking and tool_use do not occur in user turns; nothing to
			// send.
		}
	}
	if len(toolImages) > 0 {
		out = append(out, openai.UserMessage(toolImages))
	}
	switch {
	case len(parts) == 1 && texts == 1:
		// A plain string is what every compatible server understands.
		out = append(out, openai.UserMessage(parts[0].OfText.Text))
	case len(parts) > 0:
		out = append(out, openai.UserMessage(parts))
	}
	if len(perTurn) > 0 {
		out = append(out, openai.UserMessage(strings.Join(perTurn, "\n\n")))
	}
	return out, nil
}

// imagePart maps an image block onto an image_url part holding a data URL.
func imagePart(b llm.Block) (openai.ChatCompletionContentPartUnionParam, error) {
	src := b.Source
	if src == nil || src.Data == "" {
		return openai.ChatCompletionContentPartUnionParam{}, fmt.Errorf("image block has no data")
	}
	u := src.Data
	if src.Type != "url" {
		u = "data:" + src.MediaType + ";base64," + src.Data
	}
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: u}), nil
}

// mapAssistant maps an assistant turn: its text becomes the content and its
// tool_use blocks the tool calls, with the input JSON as the arguments.
// Thinking is not sent back: Chat Completions has no place for it, and
// servers that stream reasoning_content ask clients not to return it.
func mapAssistant(blocks []llm.Block) openai.ChatCompletionMessageParamUnion {
	var text strings.Builder
	var calls []openai.ChatCompletionMessageToolCallUnionParam
	for _, b := range blocks {
		switch b.Type {
		case llm.BlockText:
			text.WriteString(b.Text)
		case llm.BlockToolUse:
			args := string(b.Input)
			if args == "" {
				args = "{}"
			}
			calls = append(calls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: b.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      b.Name,
						Arguments: args,
					},
				},
			})
		}
	}
	var a openai.ChatCompletionAssistantMessageParam
	// Content may be left out only when there are tool calls.
	if text.Len() > 0 || len(calls) == 0 {
		a.Content.OfString = openai.String(text.String())
	}
	a.ToolCalls = calls
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// toolParams encodes a tool set as function tools, once per set (see
// Model.tools): the SDK then sends these bytes instead of encoding every
// schema, as a map, by reflection on every request.
func toolParams(specs []llm.ToolSpec) ([]openai.ChatCompletionToolUnionParam, error) {
	out := make([]openai.ChatCompletionToolUnionParam, len(specs))
	for i, t := range specs {
		fn, err := mapTool(t)
		if err != nil {
			return nil, err
		}
		raw, err := json.Marshal(openai.ChatCompletionFunctionTool(fn))
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", t.Name, err)
		}
		param.SetJSON(raw, &out[i])
	}
	return out, nil
}

// mapTool maps a tool spec onto a function tool whose parameters are the
// tool's JSON schema.
func mapTool(t llm.ToolSpec) (shared.FunctionDefinitionParam, error) {
	fn := shared.FunctionDefinitionParam{Name: t.Name}
	if t.Description != "" {
		fn.Description = openai.String(t.Description)
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{}}
	if len(t.InputSchema) > 0 {
		schema = nil
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return fn, fmt.Errorf("tool %q: input schema is not a JSON object: %w", t.Name, err)
		}
		if schema == nil {
			return fn, fmt.Errorf("tool %q: input schema is null, want a JSON object", t.Name)
		}
	}
	fn.Parameters = shared.FunctionParameters(schema)
	return fn, nil
}
