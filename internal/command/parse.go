package command

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/excerpt"
	"github.com/cadre-dev/cadre/internal/frontmatter"
	"github.com/cadre-dev/cadre/internal/suggest"
)

// knownFields are the frontmatter fields cadre reads or knowingly
// ignores; any other field draws a warning.
var knownFields = []string{
	"description", "argument-hint", "allowed-tools", "model", "context", "agent",
	"disable-model-invocation", "name", "version", "license", "background",
}

// maxDescription bounds a description taken from the body.
const maxDescription = 100

// parser reads one file's frontmatter, collecting every problem so that
// a file with several mistakes is fixed in one round.
type parser struct {
	path     string
	src      []string // frontmatter lines, for original spellings
	problems []Problem
	warnings []string
}

func (p *parser) line(n *yaml.Node) int {
	if n == nil || n.Line == 0 {
		return 1
	}
	return n.Line + frontmatterOffset
}

func (p *parser) errorf(n *yaml.Node, key, format string, args ...any) {
	p.problems = append(p.problems, Problem{Path: p.path, Line: p.line(n), Message: prefix(key) + fmt.Sprintf(format, args...)})
}

func (p *parser) warnAt(line int, key, format string, args ...any) {
	p.warnings = append(p.warnings, Problem{Path: p.path, Line: line, Message: prefix(key) + fmt.Sprintf(format, args...)}.Error())
}

func prefix(key string) string {
	if key == "" {
		return ""
	}
	return key + ": "
}

// parseFile reads one command or skill file. name is the name its path
// gives (already folded); the command is valid only when problems is
// empty.
func parseFile(path string, data []byte, kind Kind, name, source string) (Command, []Problem) {
	c := Command{Name: name, Kind: kind, Path: path, Source: source, Line: 1}
	p := &parser{path: path}
	if err := validateName(name); err != nil {
		p.problems = append(p.problems, Problem{Path: path, Line: 1, Message: err.Error()})
	}
	md, prob := splitMarkdown(data)
	if prob != nil {
		prob.Path = path
		return c, append(p.problems, *prob)
	}
	p.src = md.src
	if md.warning != nil {
		md.warning.Path = path
		p.warnings = append(p.warnings, md.warning.Error())
	}
	c.Body, c.Line = md.body, md.bodyLine
	var descNode *yaml.Node
	seen := map[string]int{}
	root := md.root
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := frontmatter.Deref(root.Content[i]), frontmatter.Deref(root.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "", "a field name must be a string, got %s", frontmatter.Describe(k))
			continue
		}
		key := k.Value
		if first, dup := seen[key]; dup {
			p.errorf(k, excerpt.Clip(key), "given twice (first on line %d)", first)
			continue
		}
		seen[key] = p.line(k)
		switch key {
		case "description":
			descNode = k
			c.Description = strings.TrimSpace(p.text(v, key))
		case "argument-hint":
			c.ArgumentHint = p.hint(v, key)
		case "allowed-tools":
			c.AllowedTools = p.list(v, key)
		case "model":
			c.Model = strings.TrimSpace(p.text(v, key))
		case "context":
			switch s := strings.TrimSpace(p.text(v, key)); s {
			case "", "fork":
				c.Context = s
			default:
				p.errorf(v, key, "%s is not a context: want \"fork\" (run in a forked child) or no context field (run in the conversation)", excerpt.Quote(s))
			}
		case "agent":
			c.Agent = strings.TrimSpace(p.text(v, key))
		case "disable-model-invocation":
			c.DisableModelInvocation = p.boolean(v, key)
		case "background":
			c.Background = p.boolean(v, key)
		case "name":
			if given := strings.TrimSpace(p.text(v, key)); given != "" && foldName(given) != name {
				from := "file name"
				if kind == KindSkill {
					from = "folder name"
				}
				p.warnAt(p.line(k), key, "%s differs from %q, the name its %s gives; it is invoked as /%s", excerpt.Quote(given), name, from, name)
			}
		case "version", "license":
			// Skill metadata with no effect on running it.
		default:
			msg := fmt.Sprintf("unknown field %s ignored", excerpt.Quote(key))
			if s, ok := suggest.Closest(key, knownFields); ok {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			p.warnAt(p.line(k), "", "%s", msg)
		}
	}
	switch {
	case c.Description != "":
	case kind == KindSkill:
		line := 1
		if descNode != nil {
			line = p.line(descNode)
		}
		p.problems = append(p.problems, Problem{Path: path, Line: line,
			Message: "description: a skill needs a description (say what it does and when to use it)"})
	default:
		c.Description = descriptionFromBody(c.Body)
	}
	if c.Agent != "" && c.Context != "fork" {
		p.warnAt(p.line(keyNode(root, "agent")), "agent", "only used with \"context: fork\"; ignored here")
	}
	p.shellWarnings(c.Body, c.Line)
	c.Warnings = p.warnings
	return c, p.problems
}

// keyNode finds the key node of field key in a mapping.
func keyNode(root *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := frontmatter.Deref(root.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
			return k
		}
	}
	return nil
}

// text reads a scalar; nothing (null) reads as "". Numbers and booleans
// read as written: "description: 2024 cleanup" is text to a reader.
func (p *parser) text(n *yaml.Node, key string) string {
	if n.Kind != yaml.ScalarNode {
		p.errorf(n, key, "want a string, got %s", frontmatter.Describe(n))
		return ""
	}
	if isNull(n) {
		return ""
	}
	return n.Value
}

// hint reads argument-hint. Claude Code's examples write
// "argument-hint: [file]", which YAML reads as a list; the hint is the
// text as written.
func (p *parser) hint(n *yaml.Node, key string) string {
	if n.Kind == yaml.SequenceNode {
		if n.Style&yaml.FlowStyle != 0 && n.Line >= 1 && n.Line <= len(p.src) && n.Column >= 1 {
			if line := p.src[n.Line-1]; n.Column-1 < len(line) {
				return strings.TrimSpace(stripComment(line[n.Column-1:]))
			}
		}
		var parts []string
		for _, e := range n.Content {
			if e = frontmatter.Deref(e); e.Kind != yaml.ScalarNode {
				p.errorf(e, key, "want a string, got a list holding %s", frontmatter.Describe(e))
				return ""
			}
			parts = append(parts, "["+e.Value+"]")
		}
		return strings.Join(parts, " ")
	}
	return strings.TrimSpace(p.text(n, key))
}

// stripComment drops a trailing " # comment" from a YAML line.
func stripComment(s string) string {
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

// list reads allowed-tools: a YAML list of strings, or Claude Code's
// string form ("Read, Grep, Bash(git diff:*)" or "Read Grep Glob"), as
// frontmatter.List does.
func (p *parser) list(n *yaml.Node, key string) []string {
	out, bad := frontmatter.List(n, key, frontmatter.CommasOrSpace)
	for _, b := range bad {
		p.errorf(b.Node, b.Key, "%s", b.Msg)
	}
	return out
}

// boolean reads true or false; Claude Code also accepts the strings.
func (p *parser) boolean(n *yaml.Node, key string) bool {
	if isNull(n) {
		return false
	}
	if n.Kind == yaml.ScalarNode {
		switch {
		case n.ShortTag() == "!!bool":
			b, _ := strconv.ParseBool(n.Value)
			return b
		case n.Value == "true":
			return true
		case n.Value == "false":
			return false
		}
	}
	p.errorf(n, key, "want true or false, got %s", frontmatter.Describe(n))
	return false
}

var headingMarks = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#{1,6}[ \t]+`) })

// descriptionFromBody takes the first non-empty line of body, without
// heading marks, shortened to maxDescription characters.
func descriptionFromBody(body string) string {
	for line := range strings.SplitSeq(body, "\n") {
		line = strings.TrimSpace(headingMarks().ReplaceAllString(strings.TrimSpace(line), ""))
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > maxDescription {
			r := []rune(line)
			line = strings.TrimSpace(string(r[:maxDescription-1])) + "…"
		}
		return line
	}
	return ""
}

var (
	inlineShell = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?:^|\\s)!`[^`\n]+`") })
	blockShell  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^\\s*```!") })
)

// shellWarnings flags Claude Code's shell pre-execution (!`cmd` inline,
// or a ```! block): cadre never runs commands found in a prompt file, so
// the model would see the text as written.
func (p *parser) shellWarnings(body string, first int) {
	for i, line := range strings.Split(body, "\n") {
		var what string
		switch {
		case blockShell().MatchString(line):
			what = "a ```! block"
		case inlineShell().MatchString(line):
			what = excerpt.Clip(strings.TrimSpace(inlineShell().FindString(line)))
		default:
			continue
		}
		p.warnAt(first+i, "", "%s is Claude Code's shell pre-execution; cadre does not run it, so the model sees the text as written", what)
	}
}
