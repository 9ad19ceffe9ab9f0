package agent

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/frontmatter"
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
	f, err := frontmatter.Split(data)
	if err != nil {
		return nil, &Problem{Line: 1, Message: err.Error()}
	}
	md := &markdown{root: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1}, body: f.Body()}
	if !f.Found {
		return md, nil
	}
	md.found = true
	md.offset = frontmatter.Offset
	root, warning, prob := parseFrontmatter(strings.Join(f.Frontmatter, "\n"), md.offset)
	if prob != nil {
		return nil, prob
	}
	if root != nil {
		md.root = root
	}
	md.warning = warning
	return md, nil
}

var yamlLineError = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

// parseFrontmatter parses the YAML between the "---" lines. When it is
// not valid YAML, it tries again the way Claude Code does, quoting
// top-level values such as "description: Use this: when…" that YAML
// refuses; agent files written for Claude Code rely on that.
func parseFrontmatter(src string, offset int) (root *yaml.Node, warning, problem *Problem) {
	root, err := parseMapping(src)
	if err == nil {
		return root, nil, nil
	}
	if fixed, quoted := frontmatter.QuoteValues(src, false); len(quoted) > 0 {
		if root, err2 := parseMapping(fixed); err2 == nil {
			return root, &Problem{Line: quoted[0] + offset, Message: fmt.Sprintf("frontmatter is not valid YAML (%s); read as Claude Code reads it, with %s quoted: add the quotes to silence this warning",
				yamlMessage(err, offset), frontmatter.QuotedWhat(quoted, offset))}, nil
		}
	}
	line := offset
	if m := yamlLineError().FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			line = n + offset
		}
	}
	return nil, nil, &Problem{Line: line, Message: "frontmatter is not valid YAML: " + yamlMessage(err, offset)}
}

// yamlMessage gives the YAML error without its "yaml: line N:" prefix,
// since the caller reports the file line itself.
func yamlMessage(err error, offset int) string {
	if m := yamlLineError().FindStringSubmatch(err.Error()); m != nil {
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
	if err := frontmatter.CheckAliases(&doc); err != nil {
		return nil, fmt.Errorf("yaml: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, nil
	}
	root := frontmatter.Deref(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("yaml: line %d: the frontmatter must be a mapping of fields, not %s", root.Line, frontmatter.Describe(root))
	}
	return root, nil
}
