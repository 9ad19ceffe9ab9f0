package permission

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cadre-dev/cadre/internal/excerpt"
)

// Rule is one permission rule: a tool name and an optional specifier, as
// in "Bash" or "Bash(git diff:*)".
type Rule struct {
	Tool      string
	Specifier string
}

// String gives back the rule's text: "Tool" or "Tool(spec)".
func (r Rule) String() string {
	if r.Specifier == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Specifier + ")"
}

// bare reports whether r covers every call of its tool.
func (r Rule) bare() bool { return r.Specifier == "" || r.Specifier == "*" }

// Rules are the three rule lists of a policy.
type Rules struct {
	Allow, Ask, Deny []Rule
}

// ParseRule parses one rule: "Bash", "Bash(git diff:*)", "Read(./src/**)",
// "mcp__srv__tool".
func ParseRule(s string) (Rule, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return Rule{}, errors.New("empty permission rule")
	}
	name, spec := t, ""
	if i := strings.IndexByte(t, '('); i >= 0 {
		if !strings.HasSuffix(t, ")") {
			return Rule{}, fmt.Errorf("permission rule %s: unbalanced parentheses: want Tool(specifier)", excerpt.Quote(s))
		}
		name, spec = strings.TrimSpace(t[:i]), t[i+1:len(t)-1]
		if err := balanced(spec); err != nil {
			return Rule{}, fmt.Errorf("permission rule %s: %w", excerpt.Quote(s), err)
		}
		if strings.TrimSpace(spec) == "" {
			return Rule{}, fmt.Errorf("permission rule %s: empty specifier: write %s alone to match every call", excerpt.Quote(s), excerpt.Clip(name))
		}
	} else if strings.IndexByte(t, ')') >= 0 {
		return Rule{}, fmt.Errorf("permission rule %s: unbalanced parentheses: want Tool(specifier)", excerpt.Quote(s))
	}
	if err := checkToolName(name); err != nil {
		return Rule{}, fmt.Errorf("permission rule %s: %w", excerpt.Quote(s), err)
	}
	r := Rule{Tool: name, Specifier: spec}
	if isPathFamily(name) && !r.bare() {
		if !doublestar.ValidatePattern(strings.TrimPrefix(spec, "~")) {
			return Rule{}, fmt.Errorf("permission rule %s: bad path pattern %s", excerpt.Quote(s), excerpt.Quote(spec))
		}
	}
	return r, nil
}

// ParseRuleList parses a CLI flag value: rules separated by commas and/or
// whitespace, never split inside parentheses, as in
// "Bash(git diff:*) Edit,Read". An empty list is no rules.
func ParseRuleList(s string) ([]Rule, error) {
	var (
		out   []Rule
		depth int
		start = -1
	)
	flush := func(end int) error {
		if start < 0 {
			return nil
		}
		r, err := ParseRule(s[start:end])
		if err != nil {
			return err
		}
		out = append(out, r)
		start = -1
		return nil
	}
	for i, c := range s {
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("permission rule list %s: unbalanced parentheses at offset %d", excerpt.Quote(s), i)
			}
		case depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			if err := flush(i); err != nil {
				return nil, err
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("permission rule list %s: unbalanced parentheses: a ( is never closed", excerpt.Quote(s))
	}
	if err := flush(len(s)); err != nil {
		return nil, err
	}
	return out, nil
}

func balanced(spec string) error {
	depth := 0
	for _, c := range spec {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return errors.New("unbalanced parentheses in the specifier")
			}
		}
	}
	if depth != 0 {
		return errors.New("unbalanced parentheses in the specifier")
	}
	return nil
}

func checkToolName(name string) error {
	if name == "" {
		return errors.New("missing tool name before (")
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '_', c == '-', c == '.', c == '*':
		default:
			return fmt.Errorf("bad tool name %s: a tool name holds only letters, digits, _ - . and * (one rule per entry)", excerpt.Quote(name))
		}
	}
	return nil
}
