package command

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The helpers in this file follow internal/agent/frontmatter.go; they are
// copied rather than imported so that commands do not depend on the
// agent loader.

// markdown is a command file split into its frontmatter and body.
type markdown struct {
	// root is the frontmatter mapping; an empty mapping when the file has
	// no frontmatter or an empty one.
	root *yaml.Node
	// src is the frontmatter text, for values whose original spelling
	// matters (argument-hint: [file] is a YAML list but means the text).
	src []string
	// body is the trimmed text after the frontmatter, and bodyLine the
	// file line it starts on.
	body     string
	bodyLine int
	// warning is set when the frontmatter only parsed leniently.
	warning *Problem
}

// maxFileSize bounds a command file; anything larger is not a prompt.
const maxFileSize = 1 << 20

// frontmatterOffset turns a line of the frontmatter text into a file line
// (the text starts on line 2, after "---").
const frontmatterOffset = 1

// splitMarkdown parses a command file. The frontmatter sits between a
// first line "---" and the next line "---"; everything after is the body.
// The returned problem, if any, has a file line but no path.
func splitMarkdown(data []byte) (*markdown, *Problem) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	lines := strings.Split(text, "\n")
	md := &markdown{root: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1}}
	if strings.TrimRight(lines[0], " \t") != "---" {
		md.body, md.bodyLine = trimBody(lines, 0)
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
	md.src = lines[1:end]
	md.body, md.bodyLine = trimBody(lines, end+1)
	root, warning, prob := parseFrontmatter(strings.Join(md.src, "\n"), frontmatterOffset)
	if prob != nil {
		return nil, prob
	}
	if root != nil {
		md.root = root
	}
	md.warning = warning
	return md, nil
}

// trimBody joins lines[from:] and trims it, returning the body and the
// (1-based) file line its first non-blank line is on.
func trimBody(lines []string, from int) (string, int) {
	start := from
	for start < len(lines) && strings.TrimSpace(lines[start]) == "" {
		start++
	}
	if start == len(lines) {
		return "", min(from, len(lines)-1) + 1
	}
	return strings.TrimSpace(strings.Join(lines[start:], "\n")), start + 1
}

// parseFrontmatter parses the YAML between the "---" lines. When it is
// not valid YAML, it tries again the way Claude Code does, quoting
// top-level values such as "argument-hint: [pr] [priority]" or
// "description: Use this: when…" that YAML refuses; files written for
// Claude Code rely on that.
func parseFrontmatter(src string, offset int) (root *yaml.Node, warning, problem *Problem) {
	root, line, err := parseMapping(src)
	if err == nil {
		return root, nil, nil
	}
	if fixed, quoted := quoteProblemValues(src); len(quoted) > 0 {
		if root, _, err2 := parseMapping(fixed); err2 == nil {
			lines := make([]string, len(quoted))
			for i, l := range quoted {
				lines[i] = strconv.Itoa(l + offset)
			}
			what := "the value on line " + lines[0]
			if len(lines) > 1 {
				what = "the values on lines " + strings.Join(lines, ", ")
			}
			return root, &Problem{Line: quoted[0] + offset, Message: fmt.Sprintf("frontmatter is not valid YAML (%v); read as Claude Code reads it, with %s quoted: add the quotes to silence this warning",
				err, what)}, nil
		}
	}
	return nil, nil, &Problem{Line: line + offset, Message: fmt.Sprintf("frontmatter is not valid YAML: %v", err)}
}

var yamlLinePrefix = regexp.MustCompile(`^yaml: (line \d+: )?`)

// parseMapping parses src, which must hold a mapping (or nothing: nil).
// On failure it returns the (1-based) line of src at fault and the error
// without yaml's own line, which is often off: yaml.v3 counts parser
// errors from 0 and reports where the enclosing block began.
func parseMapping(src string) (*yaml.Node, int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, errorLine(src), errors.New(yamlLinePrefix.ReplaceAllString(err.Error(), ""))
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, 0, nil
	}
	root := deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, 0, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, root.Line, fmt.Errorf("the frontmatter must be a mapping of fields, not %s", describe(root))
	}
	return root, 0, nil
}

// errorLine finds the line of invalid YAML src at fault: the line after
// the longest prefix of lines that parses. (A shorter prefix may fail only
// because it cuts a multi-line value short, so the search runs from the
// end.)
func errorLine(src string) int {
	lines := strings.Split(src, "\n")
	for k := len(lines) - 1; k > 0; k-- {
		var doc yaml.Node
		if yaml.Unmarshal([]byte(strings.Join(lines[:k], "\n")), &doc) == nil {
			return k + 1
		}
	}
	return 1
}

var topLevelField = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(\S.*)$`)

// quoteProblemValues double-quotes the value of each top-level
// "key: value" line that YAML cannot read on its own. Unlike the agent
// loader it also quotes values that start with "[" or "{": Claude Code's
// own examples write "argument-hint: [pr-number] [priority]". Quoted and
// block values, and unbalanced brackets, are left alone (those are YAML
// errors to report). It
// returns the new text and the (1-based) lines it changed.
func quoteProblemValues(src string) (string, []int) {
	lines := strings.Split(src, "\n")
	var changed []int
	for i, line := range lines {
		m := topLevelField.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		value := strings.TrimRight(m[2], " \t")
		if strings.ContainsAny(value[:1], `"'|>`) {
			continue
		}
		// A flow collection that is merely unclosed is a mistake to
		// report, not text.
		if strings.ContainsAny(value[:1], "[{") && !balanced(value) {
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

// balanced reports whether every bracket and brace in s is closed.
func balanced(s string) bool {
	return strings.Count(s, "[") == strings.Count(s, "]") && strings.Count(s, "{") == strings.Count(s, "}")
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

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
