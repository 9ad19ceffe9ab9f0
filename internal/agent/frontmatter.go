package agent

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// markdown is an agent file split into its frontmatter and body.
type markdown struct {
	// root is the frontmatter mapping; an empty mapping when the file has
	// no frontmatter or an empty one.
	root *yaml.Node
	// found reports whether the file starts with a frontmatter block.
	found bool
	body  string
	// offset turns a frontmatter line into a file line.
	offset int
	// warning is set when the frontmatter only parsed leniently.
	warning *Problem
}

// maxFileSize bounds an agent file; anything larger is not a definition.
const maxFileSize = 1 << 20

// splitMarkdown parses an agent file. The frontmatter sits between a first
// line "---" and the next line "---"; everything after is the body. The
// returned problem, if any, has a file line but no path.
func splitMarkdown(data []byte) (*markdown, *Problem) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	md := &markdown{root: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1}}
	if len(lines) == 0 || strings.TrimRight(lines[0], " \t") != "---" {
		md.body = strings.TrimSpace(text)
		return md, nil
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return nil, &Problem{Line: 1, Message: "frontmatter is not closed: no \"---\" line ends the block that line 1 opens"}
	}
	md.found = true
	md.offset = 1
	md.body = strings.TrimSpace(strings.Join(lines[end+1:], "\n"))
	root, warning, prob := parseFrontmatter(strings.Join(lines[1:end], "\n"), md.offset)
	if prob != nil {
		return nil, prob
	}
	if root != nil {
		md.root = root
	}
	md.warning = warning
	return md, nil
}

var yamlLineError = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseFrontmatter parses the YAML between the "---" lines. When it is
// not valid YAML, it tries again the way Claude Code does, quoting
// top-level values such as "description: Use this: when…" that YAML
// refuses; agent files written for Claude Code rely on that.
func parseFrontmatter(src string, offset int) (root *yaml.Node, warning, problem *Problem) {
	root, err := parseMapping(src)
	if err == nil {
		return root, nil, nil
	}
	if fixed, quoted := quoteProblemValues(src); len(quoted) > 0 {
		if root, err2 := parseMapping(fixed); err2 == nil {
			lines := make([]string, len(quoted))
			for i, l := range quoted {
				lines[i] = strconv.Itoa(l + offset)
			}
			what := "the value on line " + lines[0]
			if len(lines) > 1 {
				what = "the values on lines " + strings.Join(lines, ", ")
			}
			return root, &Problem{Line: quoted[0] + offset, Message: fmt.Sprintf("frontmatter is not valid YAML (%s); read as Claude Code reads it, with %s quoted: add the quotes to silence this warning",
				yamlMessage(err, offset), what)}, nil
		}
	}
	line := offset
	if m := yamlLineError.FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			line = n + offset
		}
	}
	return nil, nil, &Problem{Line: line, Message: "frontmatter is not valid YAML: " + yamlMessage(err, offset)}
}

// yamlMessage gives the YAML error without its "yaml: line N:" prefix,
// since the caller reports the file line itself.
func yamlMessage(err error, offset int) string {
	if m := yamlLineError.FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			return fmt.Sprintf("line %d: %s", n+offset, m[2])
		}
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// parseMapping parses src, which must hold a mapping (or nothing: nil).
func parseMapping(src string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	root := deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("yaml: line %d: the frontmatter must be a mapping of fields, not %s", root.Line, describe(root))
	}
	return root, nil
}

var topLevelField = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(\S.*)$`)

// quoteProblemValues double-quotes the value of each top-level
// "key: value" line that YAML cannot read on its own, leaving flow
// collections and quoted values alone (those are YAML errors to report).
// It returns the new text and the (1-based) lines it changed.
func quoteProblemValues(src string) (string, []int) {
	lines := strings.Split(src, "\n")
	var changed []int
	for i, line := range lines {
		m := topLevelField.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		value := strings.TrimRight(m[2], " \t")
		if strings.ContainsAny(value[:1], `"'[{|>`) {
			continue
		}
		var probe yaml.Node
		if yaml.Unmarshal([]byte(line), &probe) == nil {
			continue
		}
		value = strings.ReplaceAll(value, `\`, `\\`)
		value = strings.ReplaceAll(value, `"`, `\"`)
		lines[i] = m[1] + `: "` + value + `"`
		changed = append(changed, i+1)
	}
	return strings.Join(lines, "\n"), changed
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// describe names a node's kind for messages: "a list", "a mapping",
// "the number 3".
func describe(n *yaml.Node) string {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return "nothing"
		case "!!bool":
			return "the boolean " + n.Value
		case "!!int", "!!float":
			return "the number " + n.Value
		}
		return strconv.Quote(n.Value)
	}
	return "an unexpected value"
}
