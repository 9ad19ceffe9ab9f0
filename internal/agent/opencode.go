package agent

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/excerpt"
	"github.com/cadre-dev/cadre/internal/frontmatter"
)

// openCodeTool maps OpenCode's lowercase tool names to cadre's (Claude
// Code's); other names, MCP wildcards among them, are kept as given.
func openCodeTool(name string) string {
	switch strings.ToLower(name) {
	case "write":
		return "Write"
	case "edit", "patch", "multiedit":
		return "Edit"
	case "bash":
		return "Bash"
	case "read":
		return "Read"
	case "grep":
		return "Grep"
	case "glob":
		return "Glob"
	case "list":
		return "LS"
	case "task":
		return "Agent"
	case "webfetch":
		return "WebFetch"
	case "websearch":
		return "WebSearch"
	case "todowrite":
		return "TodoWrite"
	case "todoread":
		return "TodoRead"
	}
	return name
}

// tools reads the tools field. Every format takes a list or a
// comma-separated string (an allowlist); OpenCode files also take
// OpenCode's map of booleans.
func (p *parser) tools(n *yaml.Node, d *Definition) {
	if n.Kind == yaml.MappingNode && p.format == FormatOpenCode {
		p.toolMap(n, d)
		return
	}
	d.Tools = p.list(n, "tools")
}

// toolMap converts OpenCode's {write: false, "mymcp_*": false} map: false
// entries are disallowed. A "*": false entry turns the true entries into
// an allowlist, which is what OpenCode makes of it.
func (p *parser) toolMap(n *yaml.Node, d *Definition) {
	var enabled, disabled []string
	allOff := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := frontmatter.Deref(n.Content[i]), frontmatter.Deref(n.Content[i+1])
		if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
			p.errorf(v, "tools."+excerpt.Clip(k.Value), "want true or false, got %s", frontmatter.Describe(v))
			continue
		}
		on := v.Value == "true"
		if k.Value == "*" {
			allOff = !on
			continue
		}
		if on {
			enabled = appendNew(enabled, openCodeTool(k.Value))
		} else {
			disabled = appendNew(disabled, openCodeTool(k.Value))
		}
	}
	if allOff {
		d.Tools = append([]string{}, enabled...)
	}
	d.DisallowedTools = appendNew(d.DisallowedTools, disabled...)
}

// permissionTool names the tool an OpenCode permission key governs, ""
// for keys cadre has no equivalent for.
func permissionTool(key string) string {
	switch key {
	case "edit":
		return "Edit"
	case "bash":
		return "Bash"
	case "webfetch":
		return "WebFetch"
	case "read":
		return "Read"
	case "grep":
		return "Grep"
	case "glob":
		return "Glob"
	case "list":
		return "LS"
	}
	return ""
}

func actionRank(a string) int {
	switch a {
	case "deny":
		return 2
	case "ask":
		return 1
	}
	return 0
}

// permission converts an OpenCode permission map:
//
//	edit: deny                  → Deny: ["Edit"]
//	bash: {"git *": allow, "*": ask} → Allow: ["Bash(git *)"], Ask: ["Bash"]
//	task: {"review-*": allow}   → TaskRules, in order
//
// Key order is kept within each list.
func (p *parser) permission(n *yaml.Node, key string, d *Definition) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		if n.Kind == yaml.ScalarNode {
			p.warnf(n, key, "one action for every tool (%s) is not supported; ignored: give a mapping such as {edit: deny, bash: ask}", frontmatter.Describe(n))
			return
		}
		p.errorf(n, key, "want a mapping of tool to allow, ask or deny, got %s", frontmatter.Describe(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := frontmatter.Deref(n.Content[i]), frontmatter.Deref(n.Content[i+1])
		path := key + "." + excerpt.Clip(k.Value)
		if k.Value == "task" {
			d.TaskRules = append(d.TaskRules, p.rules(v, path)...)
			continue
		}
		tool := permissionTool(k.Value)
		if tool == "" {
			p.warnf(k, path, "not supported by cadre; ignored")
			continue
		}
		rules := p.rules(v, path)
		bareAt, bareAction := -1, ""
		for j, r := range rules {
			rule := tool
			if r.Pattern != "*" {
				rule = tool + "(" + r.Pattern + ")"
			} else {
				bareAt, bareAction = j, r.Action
			}
			switch r.Action {
			case "allow":
				d.Allow = appendNew(d.Allow, rule)
			case "ask":
				d.Ask = appendNew(d.Ask, rule)
			case "deny":
				d.Deny = appendNew(d.Deny, rule)
			}
			// OpenCode lets a later, narrower rule override "*"; cadre
			// checks deny, then ask, then allow, whatever the order, so
			// the override is lost. Say so rather than surprise.
			if bareAt >= 0 && j > bareAt && actionRank(r.Action) < actionRank(bareAction) {
				p.warnf(v, path, "%s: %s comes after \"*\": %s; cadre checks deny rules, then ask, then allow, whatever their order, so \"*\": %s also covers it",
					excerpt.Quote(r.Pattern), r.Action, bareAction, bareAction)
			}
		}
	}
}

// rules reads "allow" (pattern "*") or an ordered {pattern: action} map.
func (p *parser) rules(n *yaml.Node, key string) []TaskRule {
	switch {
	case n.Kind == yaml.ScalarNode && !isNull(n):
		if a, ok := p.action(n, key); ok {
			return []TaskRule{{Pattern: "*", Action: a}}
		}
		return nil
	case n.Kind == yaml.MappingNode:
		var out []TaskRule
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := frontmatter.Deref(n.Content[i]), frontmatter.Deref(n.Content[i+1])
			if k.Kind != yaml.ScalarNode || strings.TrimSpace(k.Value) == "" {
				p.errorf(k, key, "a pattern must be a non-empty string, got %s", frontmatter.Describe(k))
				continue
			}
			if a, ok := p.action(v, key+"."+excerpt.Clip(k.Value)); ok {
				out = append(out, TaskRule{Pattern: k.Value, Action: a})
			}
		}
		return out
	}
	p.errorf(n, key, "want allow, ask, deny or a mapping of pattern to one of them, got %s", frontmatter.Describe(n))
	return nil
}

func (p *parser) action(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		p.errorf(n, key, "want allow, ask or deny, got %s", frontmatter.Describe(n))
		return "", false
	}
	a, err := checkAction(n.Value)
	if err != nil {
		p.errorf(n, key, "%v", err)
		return "", false
	}
	return a, true
}

func checkAction(s string) (string, error) {
	a, err := oneOf(strings.TrimSpace(s), "allow", "ask", "deny")
	if err != nil {
		return "", fmt.Errorf("action %w", err)
	}
	return a, nil
}
