package mcp

import (
	"context"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools returns the tools of the servers connected now, in start order:
// each server's tools as mcp__<server>__<tool>, then the resource tools
// when a connected server offers resources. A server that is pending,
// failed or stopped contributes nothing.
func (m *Manager) Tools() []tool.Tool {
	var out []tool.Tool
	resources := false
	for _, c := range m.snapshot() {
		c.mu.Lock()
		if c.state == StateConnected {
			for _, t := range c.tools {
				out = append(out, newRemoteTool(c, t, m.opts.CallTimeout))
			}
			resources = resources || c.resources
		}
		c.mu.Unlock()
	}
	if resources {
		out = append(out, m.resourceTools()...)
	}
	return out
}

// remoteTool is one server tool offered to a model.
//
// Every MCP tool has AccessOther: permission modes treat it like a
// command — it asks unless a rule allows it, plan mode refuses it,
// bypassPermissions runs it. A server's readOnlyHint only lets its calls
// run alongside other safe calls of one message: annotations come from
// the server, which the MCP specification says not to trust for
// decisions, so they never widen what runs unasked.
type remoteTool struct {
	c       *conn
	remote  string
	info    tool.Info
	timeout time.Duration

	once   sync.Once
	schema *jsonschema.Resolved // nil when the server's schema does not resolve here
}

func newRemoteTool(c *conn, t *mcp.Tool, timeout time.Duration) *remoteTool {
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || t.InputSchema == nil || string(schema) == "null" {
		schema = []byte(`{"type":"object"}`)
	}
	readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
	return &remoteTool{c: c, remote: t.Name, timeout: timeout, info: tool.Info{
		Name: ToolName(c.srv.Name, t.Name), Description: t.Description, InputSchema: schema,
		Access: tool.AccessOther, ConcurrencySafe: readOnly,
	}}
}

func (t *remoteTool) Info() tool.Info { return t.info }

// ValidateInput checks the input against the server's schema when the
// schema library understands it (many servers write draft-07, which it
// may not); the server checks its input anyway.
func (t *remoteTool) ValidateInput(input json.RawMessage) error {
	var obj map[string]any
	if err := json.Unmarshal(input, &obj); err != nil || obj == nil {
		return fmt.Errorf("%s takes a JSON object as input", t.info.Name)
	}
	t.once.Do(func() {
		var sc jsonschema.Schema
		if json.Unmarshal(t.info.InputSchema, &sc) == nil {
			sc.Schema = "" // the draft named is not ours to enforce
			t.schema, _ = sc.Resolve(nil)
		}
	})
	if t.schema == nil {
		return nil
	}
	return t.schema.Validate(obj)
}

func (t *remoteTool) Call(ctx context.Context, _ tool.Env, input json.RawMessage) (tool.Result, error) {
	cs, err := t.c.live()
	if err != nil {
		return tool.Errorf("%v", err), nil
	}
	if t.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t.timeout, fmt.Errorf("no answer within MCP_TOOL_TIMEOUT (%v)", t.timeout))
		defer cancel()
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: t.remote, Arguments: input})
	if err != nil && context.Cause(ctx) != nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		var wire *jsonrpc.Error
		if !errors.As(err, &wire) && ctx.Err() == nil {
			// Not the server's answer but the connection failing: when the
			// server died, its connection ends at once; wait for that, so
			// that the error says so and the session's state is settled
			// before the model hears of it.
			select {
			case <-t.c.done:
			case <-ctx.Done():
			case <-time.After(deathGrace):
			}
		}
		if _, lerr := t.c.live(); lerr != nil {
			err = lerr // the server died during the call: say so
		}
		return tool.Errorf("MCP tool %s failed: %v", t.info.Name, err), nil
	}
	return result(res), nil
}

// deathGrace bounds how long a call that failed on its connection waits
// to learn whether the server died.
const deathGrace = 2 * time.Second

// result maps an MCP tool result to the model's tool result: text stays
// text, images stay images, other content is described in text;
// structured content without content is given as its JSON.
func result(r *mcp.CallToolResult) tool.Result {
	out := tool.Result{IsError: r.IsError}
	for _, c := range r.Content {
		out.Content = append(out.Content, block(c))
	}
	if len(out.Content) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Content = append(out.Content, llm.Text(string(b)))
		}
	}
	if r.StructuredContent != nil {
		out.Meta = map[string]any{"structuredContent": r.StructuredContent}
	}
	if len(out.Content) == 0 {
		out.Content = []llm.Block{llm.Text("(no content)")}
	}
	return out
}

func block(c mcp.Content) llm.Block {
	switch c := c.(type) {
	case *mcp.TextContent:
		return llm.Text(c.Text)
	case *mcp.ImageContent:
		return llm.Block{Type: llm.BlockImage, Source: &llm.ImageSource{Type: "base64", MediaType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)}}
	case *mcp.AudioContent:
		return llm.Text(fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
	case *mcp.ResourceLink:
		return llm.Text(fmt.Sprintf("[resource link %s: %s]", c.Name, c.URI))
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return llm.Text("[empty embedded resource]")
		}
		if c.Resource.Text != "" {
			return llm.Text(c.Resource.Text)
		}
		return llm.Text(fmt.Sprintf("[resource %s: %s, %d bytes of binary data, not shown]", c.Resource.URI, c.Resource.MIMEType, len(c.Resource.Blob)))
	}
	return llm.Text(fmt.Sprintf("[%T content not shown]", c))
}

// Resource tools, named as Claude Code names them.

//go:embed list_resources.md
var listResourcesMD string

//go:embed read_resource.md
var readResourceMD string

type listResourcesInput struct {
	Server string `json:"server,omitempty" jsonschema:"Only this server's resources; all connected servers when omitted"`
}

type readResourceInput struct {
	Server string `json:"server" jsonschema:"The MCP server's name"`
	URI    string `json:"uri" jsonschema:"The resource URI to read"`
}

func (m *Manager) resourceTools() []tool.Tool {
	list := tool.New(tool.Info{Name: "ListMcpResourcesTool", Description: strings.TrimSpace(listResourcesMD), Access: tool.AccessOther, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in listResourcesInput) (tool.Result, error) {
			type entry struct {
				*mcp.Resource
				Server string `json:"server"`
			}
			out := []entry{}
			found := false
			for _, c := range m.snapshot() {
				if in.Server != "" && c.srv.Name != in.Server {
					continue
				}
				found = true
				cs, err := c.live()
				if err != nil || !c.status().Resources {
					if in.Server != "" {
						return tool.Errorf("%v", cmpErr(err, fmt.Errorf("MCP server %q offers no resources", in.Server))), nil
					}
					continue
				}
				for r, err := range cs.Resources(ctx, nil) {
					if err != nil {
						return tool.Errorf("list resources of MCP server %q: %v", c.srv.Name, err), nil
					}
					out = append(out, entry{Resource: r, Server: c.srv.Name})
				}
			}
			if !found {
				return tool.Errorf("there is no MCP server named %q", in.Server), nil
			}
			b, err := json.Marshal(out)
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Text(string(b)), nil
		})
	read := tool.New(tool.Info{Name: "ReadMcpResourceTool", Description: strings.TrimSpace(readResourceMD), Access: tool.AccessOther, ConcurrencySafe: true},
		func(ctx context.Context, _ tool.Env, in readResourceInput) (tool.Result, error) {
			c := m.find(in.Server)
			if c == nil {
				return tool.Errorf("there is no MCP server named %q", in.Server), nil
			}
			cs, err := c.live()
			if err != nil {
				return tool.Errorf("%v", err), nil
			}
			res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: in.URI})
			if err != nil {
				return tool.Errorf("read %s from MCP server %q: %v", in.URI, in.Server, err), nil
			}
			type content struct {
				URI      string `json:"uri"`
				MIMEType string `json:"mimeType,omitempty"`
				Text     string `json:"text,omitempty"`
				Note     string `json:"note,omitempty"`
			}
			out := struct {
				Contents []content `json:"contents"`
			}{Contents: []content{}}
			for _, rc := range res.Contents {
				c := content{URI: rc.URI, MIMEType: rc.MIMEType, Text: rc.Text}
				if rc.Text == "" && len(rc.Blob) > 0 {
					c.Note = fmt.Sprintf("%d bytes of binary data, not shown", len(rc.Blob))
				}
				out.Contents = append(out.Contents, c)
			}
			b, err := json.Marshal(out)
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Text(string(b)), nil
		})
	return []tool.Tool{list, read}
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}
