package command

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"
)

// Parse splits a prompt that invokes a command: "/audit src/ --deep" is
// ("audit", "src/ --deep", true). The name is case-folded and the
// arguments trimmed. A prompt is not a command when it does not start
// with "/", when its first word holds a second "/" (it is a path:
// "/etc/passwd is empty"), or when that word is not a valid command
// name. Parse does not say whether the command exists; Set.Get does.
func Parse(prompt string) (name, args string, ok bool) {
	rest, found := strings.CutPrefix(prompt, "/")
	if !found {
		return "", "", false
	}
	word := rest
	if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
		word, args = rest[:i], strings.TrimSpace(rest[i:])
	}
	if strings.Contains(word, "/") {
		return "", "", false
	}
	name = foldName(word)
	if validateName(name) != nil {
		return "", "", false
	}
	return name, args, true
}

// placeholder finds what Expand fills: the skill folder, $ARGUMENTS[N],
// $ARGUMENTS and $N.
var placeholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{(CLAUDE_SKILL_DIR|CADRE_SKILL_DIR)\}|\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$(\d+)`)
})

// Expand fills the body with the arguments of one invocation:
//
//   - $ARGUMENTS is the whole argument string, as typed;
//   - $ARGUMENTS[0], $ARGUMENTS[1]… are the arguments split the way a
//     shell splits words (quotes group, and are removed), counted from 0;
//   - $1, $2… are the same arguments counted from 1; but when the body
//     uses $0, it follows Claude Code's newer skills and $0 is the first
//     argument, $1 the second;
//   - ${CLAUDE_SKILL_DIR} and ${CADRE_SKILL_DIR} are a skill's folder.
//
// An argument that was not given is empty. A $N followed by a letter,
// digit, "_" or "[" is left alone. Text from the arguments is never
// expanded again. When the body has no argument placeholder and args is
// not empty, the arguments are appended after a blank line as
// "ARGUMENTS: <args>", as Claude Code does. Shell pre-execution
// (!`cmd`) is left as written.
func (c Command) Expand(args string) string {
	body := c.Body
	words := splitArgs(args)
	base := 1
	if usesZero(body) {
		base = 0
	}
	nth := func(i int) string {
		if i < 0 || i >= len(words) {
			return ""
		}
		return words[i]
	}
	var b strings.Builder
	used, last := false, 0
	for _, m := range placeholder().FindAllStringSubmatchIndex(body, -1) {
		var with string
		switch {
		case m[2] >= 0: // skill folder
			if c.Kind != KindSkill || c.Path == "" {
				continue
			}
			with = filepath.Dir(c.Path)
		case m[4] >= 0: // $ARGUMENTS[N]
			n, err := strconv.Atoi(body[m[4]:m[5]])
			if err != nil {
				continue
			}
			with, used = nth(n), true
		case m[6] >= 0: // $N
			if m[1] < len(body) && wordOrBracket(body[m[1]]) {
				continue
			}
			n, err := strconv.Atoi(body[m[6]:m[7]])
			if err != nil {
				continue
			}
			with, used = nth(n-base), true
		default: // $ARGUMENTS
			with, used = args, true
		}
		b.WriteString(body[last:m[0]])
		b.WriteString(with)
		last = m[1]
	}
	b.WriteString(body[last:])
	out := b.String()
	if !used && strings.TrimSpace(args) != "" {
		if out == "" {
			return "ARGUMENTS: " + args
		}
		return out + "\n\nARGUMENTS: " + args
	}
	return out
}

// usesZero reports whether body has a $0 placeholder.
func usesZero(body string) bool {
	for _, m := range placeholder().FindAllStringSubmatchIndex(body, -1) {
		if m[6] >= 0 && body[m[6]:m[7]] == "0" && (m[1] == len(body) || !wordOrBracket(body[m[1]])) {
			return true
		}
	}
	return false
}

func wordOrBracket(b byte) bool {
	return b == '_' || b == '[' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// splitArgs splits args into words the way a shell does, without
// expanding anything: white space separates words; '…' and "…" group
// and are removed; a backslash escapes a quote, a backslash or white
// space (elsewhere it is kept, so Windows paths survive). An unclosed
// quote runs to the end.
func splitArgs(args string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	rs := []rune(args)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\' && quote != '\'' && i+1 < len(rs) && escapable(rs[i+1], quote):
			i++
			cur.WriteRune(rs[i])
			inWord = true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// escapable reports whether a backslash escapes next: inside "…" only a
// quote or a backslash, outside also a ' or white space.
func escapable(next, quote rune) bool {
	if next == '\\' || next == '"' {
		return true
	}
	return quote == 0 && (next == '\'' || unicode.IsSpace(next))
}
