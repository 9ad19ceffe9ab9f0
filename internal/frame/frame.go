package frame

import (
	_ "embed"
	"strings"
)

//go:embed untrusted.md
var untrustedText string

// Untrusted is the note that frames a child's text.
func Untrusted() string { return strings.TrimSpace(untrustedText) }

// Escape returns s with every "<" that would open or close a tag written
// as "&lt;": before a letter, "!" or "?" (an opening tag, a comment, a
// declaration), and before "/" even after blanks ("< /result>" reads as a
// closing tag to a model, if not to a parser). A "<" before a blank and
// anything else, a digit, "=" or "-" stays: "a < b", "x<5", "<-ch" read as
// they were written. Case does not matter to it, and nothing is ever
// unescaped: a child that writes "&lt;" itself shows the same harmless
// text.
func Escape(s string) string {
	if !strings.Contains(s, "<") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); i++ {
		if s[i] == '<' && opensTag(s[i+1:]) {
			b.WriteString("&lt;")
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// opensTag reports whether rest, the text after a "<", makes a tag of it.
func opensTag(rest string) bool {
	if rest == "" {
		return false
	}
	switch c := rest[0]; {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '!', c == '?', c == '/':
		return true
	}
	// "< /x>": blanks, then a slash.
	trimmed := strings.TrimLeft(rest, " \t\r\n")
	return len(trimmed) < len(rest) && strings.HasPrefix(trimmed, "/")
}
