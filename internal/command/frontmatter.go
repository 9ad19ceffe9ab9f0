package command

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/frontmatter"
)

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

// frontmatterOffset turns a line of the frontmatter text into a file line.
const frontmatterOffset = frontmatter.Offset

// splitMarkdown parses a command file. The frontmatter sits between a
// first line "---" and the next line "---"; everything after is the body.
// The returned problem, if any, has a file line but no path.
func splitMarkdown(data []byte) (*markdown, *Problem) {
	f, err := frontmatter.Split(data)
	if err != nil {
		return nil, &Problem{Line: 1, Message: err.Error()}
	}
	md := &markdown{root: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1}}
	md.body, md.bodyLine = trimBody(f.Lines, f.BodyStart)
	if !f.Found {
		return md, nil
	}
	md.src = f.Frontmatter
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
	msg := yamlLinePrefix().ReplaceAllString(err.Error(), "")
	// Unlike agent files, a value opening with "[" or "{" may be text:
	// Claude Code's own examples write "argument-hint: [pr-number] [priority]".
	if fixed, quoted := frontmatter.QuoteValues(src, true); len(quoted) > 0 {
		if root, _, err2 := parseMapping(fixed); err2 == nil {
			return root, &Problem{Line: quoted[0] + offset, Message: fmt.Sprintf("frontmatter is not valid YAML (%s); read as Claude Code reads it, with %s quoted: add the quotes to silence this warning",
				msg, frontmatter.QuotedWhat(quoted, offset))}, nil
		}
	}
	if line == 0 {
		line = errorLine(src, err)
	}
	return nil, nil, &Problem{Line: line + offset, Message: "frontmatter is not valid YAML: " + msg}
}

var yamlLinePrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: (line \d+: )?`) })

// parseMapping parses src, which must hold a mapping (or nothing: nil).
// On failure it returns the (1-based) line of src at fault, or 0 for
// yaml's own errors, whose line is often off (yaml.v3 counts parser
// errors from 0 and reports where the enclosing block began): errorLine
// finds it, at a cost paid only for the error that is reported.
func parseMapping(src string) (*yaml.Node, int, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, 0, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, 0, nil
	}
	root := frontmatter.Deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, 0, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, root.Line, fmt.Errorf("the frontmatter must be a mapping of fields, not %s", frontmatter.Describe(root))
	}
	return root, 0, nil
}

// errorSearchBytes bounds how much errorLine parses in all. Each try
// parses a prefix, so trying every line of a long frontmatter takes time
// quadratic in its size: a 24 KB file took a minute and a half. Real
// frontmatters are a few hundred bytes and are searched whole.
const errorSearchBytes = 64 << 10

var yamlErrorLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): `) })

// errorLine finds the line of invalid YAML src at fault: the line after
// the longest prefix of lines that parses. (A shorter prefix may fail only
// because it cuts a multi-line value short, so the search runs from the
// end.) Past errorSearchBytes it settles for the line yaml named in err.
func errorLine(src string, err error) int {
	lines := strings.Split(src, "\n")
	budget := errorSearchBytes
	for k := len(lines) - 1; k > 0; k-- {
		prefix := strings.Join(lines[:k], "\n")
		if budget -= len(prefix); budget < 0 {
			if m := yamlErrorLine().FindStringSubmatch(err.Error()); m != nil {
				if n, convErr := strconv.Atoi(m[1]); convErr == nil && n >= 1 && n <= len(lines) {
					return n
				}
			}
			return 1
		}
		var doc yaml.Node
		if yaml.Unmarshal([]byte(prefix), &doc) == nil {
			return k + 1
		}
	}
	return 1
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }
