package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Transport kinds, as Claude Code's "type" names them.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
	// TransportSDK is a server the Agent SDK runs in its own process and
	// reaches over the control protocol ({"type": "sdk", "name": …} in
	// the --mcp-config it passes). cadre recognises it, to report it, but
	// cannot reach it.
	TransportSDK = "sdk"
)

// Config is one server's definition, in Claude Code's shape.
type Config struct {
	// Type is stdio (the default when Command is set), http (streamable
	// HTTP) or sse.
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Name is what an Agent SDK server ("type": "sdk") is called in the
	// SDK's process.
	Name string `json:"name,omitempty"`
}

// Server is a named Config and where it was defined.
type Server struct {
	Name   string
	Config Config
	// Source says where the definition came from, for status and errors:
	// ".mcp.json", "settings", "--mcp-config", "agent reviewer".
	Source string
	// Project: the definition came with the repository (.mcp.json, the
	// project's shared settings) and was approved by the user; such a
	// server runs inside the sandbox (Options.Sandbox).
	Project bool
}

// ParseConfig reads one server definition and checks it.
func ParseConfig(name string, raw json.RawMessage) (Config, error) {
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("MCP server %q: %w", name, err)
	}
	return c, c.check(name)
}

func (c *Config) check(name string) error {
	if strings.TrimSpace(name) == "" {
		return errors.New("an MCP server has an empty name")
	}
	switch c.Type {
	case "":
		switch {
		case c.Command != "":
			c.Type = TransportStdio
		case c.URL != "":
			return fmt.Errorf("MCP server %q: a url needs \"type\": \"http\" or \"sse\"", name)
		default:
			return fmt.Errorf("MCP server %q: want a command (stdio) or a type and url (http, sse)", name)
		}
	case TransportStdio:
	case TransportHTTP, "streamable-http", "streamableHttp":
		c.Type = TransportHTTP
	case TransportSSE:
	case TransportSDK:
		return nil
	default:
		return fmt.Errorf("MCP server %q: type %q is unknown: want stdio, http or sse", name, c.Type)
	}
	if c.Type == TransportStdio {
		if c.Command == "" {
			return fmt.Errorf("MCP server %q: a stdio server needs a command", name)
		}
		if c.URL != "" || len(c.Headers) > 0 {
			return fmt.Errorf("MCP server %q: url and headers belong to http and sse servers, not stdio", name)
		}
		return nil
	}
	if c.URL == "" {
		return fmt.Errorf("MCP server %q: a %s server needs a url", name, c.Type)
	}
	if c.Command != "" || len(c.Args) > 0 || len(c.Env) > 0 {
		return fmt.Errorf("MCP server %q: command, args and env belong to stdio servers, not %s", name, c.Type)
	}
	return nil
}

// ParseServers reads a {"mcpServers": {name: config}} document (.mcp.json,
// an --mcp-config file or string). Servers come back sorted by name.
func ParseServers(data []byte, source string) ([]Server, error) {
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	if doc.MCPServers == nil {
		return nil, fmt.Errorf("%s: no \"mcpServers\" object", source)
	}
	return ParseMap(doc.MCPServers, source)
}

// ParseMap reads a map of server name to definition (the settings'
// mcpServers), sorted by name.
func ParseMap(m map[string]json.RawMessage, source string) ([]Server, error) {
	names := slices.Sorted(maps.Keys(m))
	var out []Server
	var errs []error
	for _, n := range names {
		c, err := ParseConfig(n, m[n])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", source, err))
			continue
		}
		out = append(out, Server{Name: n, Config: c, Source: source})
	}
	return out, errors.Join(errs...)
}

// ReadFlag reads one --mcp-config value: a JSON document when it starts
// with "{", else the path of a file holding one (relative to cwd).
func ReadFlag(value, cwd string) ([]Server, error) {
	v := strings.TrimSpace(value)
	if strings.HasPrefix(v, "{") {
		return ParseServers([]byte(v), "--mcp-config")
	}
	path := v
	if !strings.HasPrefix(path, "/") && cwd != "" {
		path = cwd + string(os.PathSeparator) + path
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--mcp-config: %w", err)
	}
	return ParseServers(data, "--mcp-config "+value)
}

// varRef is ${NAME} or ${NAME:-default}.
var varRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([^}:]+)(?::-([^}]*))?\}`) })

// Expand replaces ${VAR} and ${VAR:-default} in command, args, env, url
// and headers, as Claude Code does. A variable that is unset (or empty)
// and has no default is an error naming it: a server started with a
// literal "${TOKEN}" would fail later and less clearly.
func (c Config) Expand(getenv func(string) string) (Config, error) {
	var missing []string
	expand := func(s string) string {
		return varRef().ReplaceAllStringFunc(s, func(ref string) string {
			m := varRef().FindStringSubmatch(ref)
			if v := getenv(m[1]); v != "" {
				return v
			}
			if strings.Contains(ref, ":-") {
				return m[2]
			}
			if !slices.Contains(missing, m[1]) {
				missing = append(missing, m[1])
			}
			return ref
		})
	}
	out := c
	out.Command, out.URL = expand(c.Command), expand(c.URL)
	out.Args = nil
	for _, a := range c.Args {
		out.Args = append(out.Args, expand(a))
	}
	out.Env, out.Headers = expandMap(c.Env, expand), expandMap(c.Headers, expand)
	if len(missing) > 0 {
		return c, fmt.Errorf("missing environment variables: %s", strings.Join(missing, ", "))
	}
	return out, nil
}

func expandMap(m map[string]string, expand func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = expand(v)
	}
	return out
}

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-zA-Z0-9_-]`) })

// Normalize makes a server or tool name safe in a model-facing tool name,
// as Claude Code does: every character but letters, digits, _ and -
// becomes _.
func Normalize(name string) string { return unsafeName().ReplaceAllString(name, "_") }

// ToolName is the name the model sees for a server's tool.
func ToolName(server, tool string) string {
	return "mcp__" + Normalize(server) + "__" + Normalize(tool)
}
