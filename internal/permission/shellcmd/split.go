package shellcmd

import "strings"

// splitCommand splits a shell command line into its simple commands at
// &&, ||, ;, |, & and newlines outside quotes, collapsing whitespace runs
// outside quotes to one space. subst reports a command substitution or a
// process substitution ($(…), `…`, <(…), >(…)) outside single quotes.
//
// With inner set, substitutions and subshell parentheses split too, so the
// commands inside them become parts of their own; deny rules look at those.
// This is not a shell parser: Analyze uses it only for text the
// parser rejects, so that deny rules still see the commands bash would run
// before it reached the error. It errs towards more, smaller parts.
func splitCommand(command string, inner bool) (parts []string, subst bool) {
	var (
		cur   strings.Builder
		quote byte // 0, '\'' or '"'
		space bool // whitespace seen since the last character written
		last  byte // last character written outside quotes, for redirections
	)
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			parts = append(parts, s)
		}
		cur.Reset()
		space, last = false, 0
	}
	write := func(c byte) {
		if space && cur.Len() > 0 {
			cur.WriteByte(' ')
		}
		space = false
		cur.WriteByte(c)
	}
	for i := 0; i < len(command); i++ {
		c := command[i]
		next := byte(0)
		if i+1 < len(command) {
			next = command[i+1]
		}
		switch quote {
		case '\'':
			cur.WriteByte(c)
			if c == '\'' {
				quote = 0
			}
			continue
		case '"':
			switch {
			case c == '\\' && next != 0:
				cur.WriteByte(c)
				cur.WriteByte(next)
				i++
			case c == '"':
				cur.WriteByte(c)
				quote = 0
			case c == '$' && next == '(' || c == '`':
				subst = true
				if inner {
					// Leave the quotes: what follows is a command.
					quote = 0
					flush()
					if c == '$' {
						i++
					}
				} else {
					cur.WriteByte(c)
				}
			default:
				cur.WriteByte(c)
			}
			continue
		}
		switch {
		case c == '\\' && next == '\n':
			space = true
			i++
		case c == '\\' && next != 0:
			write(c)
			cur.WriteByte(next)
			i++
		case c == ' ' || c == '\t' || c == '\r':
			space = true
		case c == '\n' || c == ';':
			flush()
		case c == '&' && next == '&', c == '|' && next == '|', c == '|' && next == '&':
			flush()
			i++
		case c == '&':
			if last == '>' || last == '<' || next == '>' {
				write(c) // a redirection: 2>&1, >&2, &>file
				last = c
			} else {
				flush()
			}
		case c == '|':
			if last == '>' {
				write(c) // >| clobbers, it does not pipe
				last = c
			} else {
				flush()
			}
		case c == '$' && next == '(', (c == '<' || c == '>') && next == '(':
			subst = true
			if inner {
				flush()
				i++
			} else {
				write(c)
				last = c
			}
		case c == '`':
			subst = true
			if inner {
				flush()
			} else {
				write(c)
				last = c
			}
		case inner && (c == '(' || c == ')' || c == '{' || c == '}'):
			flush()
		case c == '\'' || c == '"':
			write(c)
			quote = c
			last = c
		default:
			write(c)
			last = c
		}
	}
	flush()
	return parts, subst
}

// CollapseSpace collapses whitespace runs to one space and trims.
func CollapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// stripAssignments removes leading VAR=value words ("FOO=1 git push"), so
// deny rules see the command that actually runs.
func stripAssignments(part string) string {
	for {
		word, rest, found := cutWord(part)
		if !found || !isAssignment(word) {
			return part
		}
		part = rest
	}
}

// cutWord splits off the first word of part, respecting quotes.
func cutWord(part string) (word, rest string, found bool) {
	var (
		quote byte
		depth int // inside $(…)
	)
	for i := 0; i < len(part); i++ {
		c := part[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '\\':
			i++
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ' ' && depth == 0:
			return part[:i], part[i+1:], true
		}
	}
	return part, "", false
}

func isAssignment(word string) bool {
	name, _, ok := strings.Cut(word, "=")
	if !ok || name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// unquote drops shell quoting characters, so `git "push"` reads as the
// git push it runs. Only deny and ask rules use it.
func unquote(part string) string {
	if !strings.ContainsAny(part, `'"\`) {
		return part
	}
	var (
		b     strings.Builder
		quote byte
	)
	for i := 0; i < len(part); i++ {
		c := part[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
				continue
			}
		case c == '\\' && i+1 < len(part) && (quote == 0 || strings.IndexByte(`"\$`+"`", part[i+1]) >= 0):
			i++
			c = part[i]
		case c == quote && quote != 0:
			quote = 0
			continue
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
