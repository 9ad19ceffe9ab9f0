package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/excerpt"
)

// Offset turns a line of the frontmatter text into a file line: the text
// starts on line 2, after the opening "---".
const Offset = 1

// ErrNotClosed is returned by Split for a file whose opening "---" has no
// closing one; the fault is on line 1.
var ErrNotClosed = errors.New("frontmatter is not closed: no \"---\" line ends the block that line 1 opens")

// File is a markdown file cut at its frontmatter.
type File struct {
	// Lines are the file's lines, without a leading byte-order mark and
	// with CRLF line ends read as LF.
	Lines []string
	// Found reports whether the file opens with a frontmatter block.
	Found bool
	// Frontmatter holds the lines between the "---" lines; its line n
	// (1-based) is file line n+Offset.
	Frontmatter []string
	// BodyStart is the index in Lines of the first line after the
	// frontmatter: 0 when there is none.
	BodyStart int
}

// Split cuts data into frontmatter and body. The frontmatter sits between
// a first line "---" and the next line "---" (trailing blanks allowed);
// everything after is the body.
func Split(data []byte) (*File, error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	f := &File{Lines: strings.Split(text, "\n")}
	if !isFence(f.Lines[0]) {
		return f, nil
	}
	for i := 1; i < len(f.Lines); i++ {
		if isFence(f.Lines[i]) {
			f.Found = true
			f.Frontmatter = f.Lines[1:i]
			f.BodyStart = i + 1
			return f, nil
		}
	}
	return nil, ErrNotClosed
}

func isFence(line string) bool { return strings.TrimRight(line, " \t") == "---" }

// Body is the text after the frontmatter, trimmed.
func (f *File) Body() string {
	return strings.TrimSpace(strings.Join(f.Lines[f.BodyStart:], "\n"))
}

// topLevelField is compiled on first use, not at init: every cadre command
// initialises this package, few read a frontmatter file.
var topLevelField = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(\S.*)$`)
})

// QuoteValues double-quotes the value of each top-level "key: value" line
// of src that YAML cannot read on its own, as Claude Code reads such
// values ("description: Use this: when…"). Quoted and block values are
// left alone: those are YAML errors to report. So are values that open a
// flow collection, unless flowAsText is set, in which case a balanced one
// is quoted too (Claude Code's command examples write
// "argument-hint: [pr-number] [priority]") and only an unclosed one is
// left. It returns the new text and the (1-based) lines it changed.
func QuoteValues(src string, flowAsText bool) (string, []int) {
	lines := strings.Split(src, "\n")
	var changed []int
	for i, line := range lines {
		m := topLevelField().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		value := strings.TrimRight(m[2], " \t")
		if strings.ContainsAny(value[:1], `"'|>`) {
			continue
		}
		if strings.ContainsAny(value[:1], "[{") && (!flowAsText || !balanced(value)) {
			continue
		}
		var probe yaml.Node
		if yaml.Unmarshal([]byte(line), &probe) == nil {
			continue
		}
		lines[i] = m[1] + `: "` + escapeQuoted(value) + `"`
		changed = append(changed, i+1)
	}
	return strings.Join(lines, "\n"), changed
}

// escapeQuoted spells value for a YAML double-quoted scalar that reads
// back as value: escaped are the quote and the backslash, the line breaks
// YAML would fold to a space (CR, NEL, the Unicode line and paragraph
// separators) and the characters it refuses raw (C0 and C1 controls but
// the tab, DEL, a byte-order mark). Invalid UTF-8 is kept as it is, for
// YAML to refuse as it did before.
func escapeQuoted(value string) string {
	var b strings.Builder
	for i := 0; i < len(value); {
		r, size := utf8.DecodeRuneInString(value[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteByte(value[i])
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 && r != '\t', r >= 0x7f && r <= 0x9f, r == '\u2028', r == '\u2029', r == '\ufeff':
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// balanced reports whether every bracket and brace in s is closed.
func balanced(s string) bool {
	return strings.Count(s, "[") == strings.Count(s, "]") && strings.Count(s, "{") == strings.Count(s, "}")
}

// QuotedWhat names the values QuoteValues quoted, for the warning that
// says so: "the value on line 3" or "the values on lines 3, 5". lines are
// frontmatter lines; offset turns them into file lines.
func QuotedWhat(lines []int, offset int) string {
	nums := make([]string, len(lines))
	for i, l := range lines {
		nums[i] = strconv.Itoa(l + offset)
	}
	if len(nums) == 1 {
		return "the value on line " + nums[0]
	}
	return "the values on lines " + strings.Join(nums, ", ")
}

// Deref follows alias nodes to the node they stand for.
func Deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// Describe names a node's kind for messages: "a list", "a mapping",
// "the number 3". A scalar is quoted as an excerpt: messages never repeat
// a whole value.
func Describe(n *yaml.Node) string {
	n = Deref(n)
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
			return "the boolean " + excerpt.Clip(n.Value)
		case "!!int", "!!float":
			return "the number " + excerpt.Clip(n.Value)
		}
		return excerpt.Quote(n.Value)
	}
	return "an unexpected value"
}

// MaxAliasValues bounds how many values aliases may add to a document
// once expanded. Real files alias a list or two; a few lines of nested
// aliases can stand for billions of values ("billion laughs").
const MaxAliasValues = 10_000

// AliasError is a document whose aliases cannot be expanded safely.
type AliasError struct {
	// Line is the (1-based) line of the alias at fault in the YAML text.
	Line int
	Msg  string
}

func (e *AliasError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// CheckAliases reports the first alias under n that refers to a value
// containing it, which no expansion ever finishes, or that makes the
// aliases stand for more than MaxAliasValues values. yaml.v3 accepts both
// into a node tree; code that follows aliases (to turn a node into plain
// values, say) must not see them.
func CheckAliases(n *yaml.Node) error {
	c := aliasCheck{open: map[*yaml.Node]bool{}}
	return c.walk(n, nil)
}

type aliasCheck struct {
	open  map[*yaml.Node]bool // the nodes on the path from the root
	added int                 // values reached through aliases so far
}

// walk visits n; via is the outermost alias being expanded, nil outside
// any.
func (c *aliasCheck) walk(n, via *yaml.Node) error {
	if n == nil {
		return nil
	}
	if via != nil {
		if c.added++; c.added > MaxAliasValues {
			return &AliasError{Line: via.Line, Msg: fmt.Sprintf("aliases expand to more than %d values", MaxAliasValues)}
		}
	}
	if n.Kind == yaml.AliasNode {
		if c.open[n.Alias] {
			return &AliasError{Line: n.Line, Msg: "an alias refers to a value that contains it"}
		}
		if via == nil {
			via = n
		}
		return c.walk(n.Alias, via)
	}
	c.open[n] = true
	defer delete(c.open, n)
	for _, child := range n.Content {
		if err := c.walk(child, via); err != nil {
			return err
		}
	}
	return nil
}
