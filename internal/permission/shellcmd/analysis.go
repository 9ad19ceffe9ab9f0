package shellcmd

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds on the work one command may cause. A command past them is not
// read at all: it is "not statically readable" and needs approval.
const (
	// maxCommandBytes bounds the text parsed, inner scripts included.
	maxCommandBytes = 64 << 10
	// maxNesting bounds how deeply brackets and compound commands nest, so
	// the parser's recursion stays shallow whatever the input.
	maxNesting = 100
	// maxScriptDepth bounds re-parsing: sh -c 'sh -c "eval …"' is three.
	maxScriptDepth = 6
	// maxWrappers bounds how many wrappers one command may be looked
	// through (env nice timeout … rm).
	maxWrappers = 16
	// maxMaybe bounds how many argument tails of one command deny rules
	// look at as commands it may run.
	maxMaybe = 64
)

// Analysis is what a command line does, as far as it can be read
// without running it. Bash rules are matched against it.
type Analysis struct {
	// Written holds the text of every simple command as written (its
	// words' source text, one space apart): what allow rules must match.
	Written []string
	// Looks holds every form of every simple command a deny or ask rule
	// looks at: as written, with quotes removed, with the executable's
	// directory dropped, and what runs inside wrappers and sh -c scripts.
	Looks []string
	// Writes are the redirections that write a file.
	Writes []Write
	// Opaque says what cannot be read statically (eval, $cmd, a parse
	// error); such a command is never approved by an allow rule.
	Opaque []string
	// Hidden says what runs code the rules never see, though the command
	// itself is readable: a script a shell or interpreter reads from a
	// file, its input, a process substitution or a here-string; source.
	// Allow rules may still approve it; when any Bash deny or ask rule
	// exists it asks, since that rule cannot be checked (issue 22).
	Hidden []string
	// Maybe holds the commands that may run inside a program deny rules do
	// not know to be a wrapper: each argument list's tail, from every word
	// on (ionice -c3 rm -rf x: "rm -rf x"; script -qc "rm x": "rm x"). A
	// deny or ask rule that matches one asks rather than denies, since
	// the word may be data ("echo rm").
	Maybe []string
	// Subst: a command, process or arithmetic substitution, whose result
	// the rule never saw; allow rules never match.
	Subst bool
	// CwdMoves: something may change the working directory (cd, source,
	// eval, env -C) before a relative redirection target is opened.
	CwdMoves bool
}

// Write is a redirection (or a wrapper's option) that writes a file: its
// operator, as written, and its target word.
type Write struct {
	Op     string
	Target Word
}

// Word is one word as the shell would pass it, when that can be known
// without running anything.
type Word struct {
	Raw   string // source text
	Value string // after quote removal; meaningful when static
	// Static: no expansion or substitution; Value is the word.
	Static bool
	// Glob: an unquoted *, ?, [ or {, which the shell may expand into
	// other words.
	Glob bool
	// Tilde: an unquoted leading ~, which the shell expands.
	Tilde bool
}

// Analyze reads a command line. It never fails: what it cannot read
// is recorded in opaque.
func Analyze(command string) *Analysis {
	a := &Analysis{}
	if strings.TrimSpace(command) == "" {
		return a
	}
	(&shellReader{a: a, budget: maxCommandBytes}).script(command, 0)
	return a
}

// shellReader walks one command line and the scripts inside it.
type shellReader struct {
	a *Analysis
	// budget is how many more bytes may be parsed, so that scripts
	// re-parsed from words cannot multiply the work.
	budget int
}

// script parses src and reads what it runs. depth counts re-parses.
func (r *shellReader) script(src string, depth int) {
	a := r.a
	switch {
	case depth > maxScriptDepth:
		a.Opaque = append(a.Opaque, fmt.Sprintf("scripts nested more than %d deep", maxScriptDepth))
		return
	case len(src) > r.budget:
		a.Opaque = append(a.Opaque, fmt.Sprintf("a command longer than %d bytes", maxCommandBytes))
		return
	case nesting(src) > maxNesting:
		a.Opaque = append(a.Opaque, fmt.Sprintf("brackets or compound commands nested more than %d deep", maxNesting))
		return
	}
	r.budget -= len(src)
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		// Bash runs the lines before a syntax error, so deny rules still
		// look at what a plain split finds; nothing here can be approved.
		a.Opaque = append(a.Opaque, fmt.Sprintf("shell syntax that cannot be parsed (%v)", err))
		a.CwdMoves = true
		whole, _ := splitCommand(src, false)
		inner, _ := splitCommand(src, true)
		for _, part := range append(whole, inner...) {
			bare := stripAssignments(part)
			a.Looks = append(a.Looks, part, bare, unquote(part), unquote(bare))
		}
		return
	}
	w := &scriptWalker{r: r, src: src, depth: depth}
	syntax.Walk(f, w.visit)
}

// scriptWalker visits the nodes of one parsed script.
type scriptWalker struct {
	r     *shellReader
	src   string
	depth int
}

func (w *scriptWalker) visit(n syntax.Node) bool {
	a := w.r.a
	switch x := n.(type) {
	case *syntax.Stmt:
		if x.Cmd == nil {
			// Redirections alone ("> f"): nothing for an allow rule to
			// match, so an empty text, which none does.
			w.written("")
		}
	case *syntax.CallExpr:
		w.call(x)
	case *syntax.DeclClause, *syntax.TestClause:
		text := CollapseSpace(w.text(n))
		w.written(text)
		a.Looks = append(a.Looks, text)
	case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause:
		// Arithmetic counts: bash evaluates variables' contents in it,
		// and a[$(cmd)] there runs cmd.
		a.Subst = true
	case *syntax.Redirect:
		w.redirect(x)
	}
	return true
}

// written records the text of a command as the user wrote it. Commands
// of scripts inside it (sh -c '…') are not: an allow rule approves the
// command that runs them.
func (w *scriptWalker) written(text string) {
	if w.depth == 0 {
		w.r.a.Written = append(w.r.a.Written, text)
	}
}

// text is the source text of a node.
func (w *scriptWalker) text(n syntax.Node) string {
	start, end := n.Pos(), n.End()
	if !start.IsValid() || !end.IsValid() || end.Offset() > uint(len(w.src)) || start.Offset() > end.Offset() {
		return ""
	}
	return w.src[start.Offset():end.Offset()]
}

func (w *scriptWalker) call(c *syntax.CallExpr) {
	a := w.r.a
	var raw []string
	for _, as := range c.Assigns {
		raw = append(raw, w.text(as))
	}
	words := make([]Word, len(c.Args))
	for i, arg := range c.Args {
		words[i] = w.word(arg)
		raw = append(raw, words[i].Raw)
	}
	all := strings.Join(raw, " ")
	w.written(all)
	a.Looks = append(a.Looks, all)
	if len(words) == 0 {
		return
	}
	w.look(words, 0, false)
}

// look records what a deny rule should see of one simple command's words
// and looks inside them: through the executable's directory, wrappers,
// and scripts given to sh -c or eval. level counts wrappers; fromXargs
// says xargs runs words, appending more read from its input.
func (w *scriptWalker) look(words []Word, level int, fromXargs bool) {
	a := w.r.a
	if level > maxWrappers {
		a.Opaque = append(a.Opaque, fmt.Sprintf("more than %d wrapper commands in a row", maxWrappers))
		return
	}
	vals := make([]string, len(words))
	for i, wd := range words {
		vals[i] = wd.Raw
		if wd.Static {
			vals[i] = wd.Value
		}
	}
	a.Looks = append(a.Looks, strings.Join(vals, " "))
	name := words[0]
	if !name.Static || name.Glob || name.Value == "" {
		a.Opaque = append(a.Opaque, fmt.Sprintf("the command name %s is only known when it runs", name.Raw))
		return
	}
	base := name.Value
	if strings.Contains(base, "/") {
		// /bin/rm, ./rm and ~/bin/rm are rm to a deny rule.
		base = path.Base(base)
		vals[0] = base
		a.Looks = append(a.Looks, strings.Join(vals, " "))
	}
	args := words[1:]

	switch base {
	case "eval":
		a.Opaque = append(a.Opaque, "eval runs text put together when it runs")
		a.CwdMoves = true
		w.reparse(args)
		return
	case "trap":
		// trap [--] CODE SIGNAL…: CODE runs later; "-" and "" reset or
		// ignore, -p, -l and -P list.
		if len(args) > 0 && args[0].Static && args[0].Value == "--" {
			args = args[1:]
		}
		switch {
		case len(args) < 2:
		case !args[0].Static:
			a.Opaque = append(a.Opaque, "trap runs text only known when it runs")
		case args[0].Value == "" || args[0].Value == "-" || strings.HasPrefix(args[0].Value, "-"):
		default:
			a.Opaque = append(a.Opaque, "trap runs its text later")
			w.reparse(args[:1])
		}
		return
	case "alias":
		for _, x := range args {
			if !x.Static || strings.Contains(x.Value, "=") {
				a.Opaque = append(a.Opaque, "alias makes a name run other text")
				return
			}
		}
		return
	case "cd", "pushd", "popd":
		a.CwdMoves = true
		return
	case "source", ".":
		// source and . run a file in this shell: the rules see its name,
		// not its content (/dev/stdin, <(…) included); and it may cd.
		a.CwdMoves = true
		a.Hidden = append(a.Hidden, base+" runs a file's commands, which no rule sees")
		return
	case "hash":
		for _, x := range args {
			if !x.Static || strings.HasPrefix(x.Value, "-") && strings.Contains(x.Value, "p") {
				a.Opaque = append(a.Opaque, "hash -p makes a name run another program")
				return
			}
		}
		return
	}
	if isShell(base) {
		w.shell(base, args, fromXargs)
		return
	}
	if isInterpreter(base) {
		a.Hidden = append(a.Hidden, base+" runs a program (from a file, its input or -c/-e text) which no rule reads")
	}
	spec := wrapperFor(base)
	if spec == nil {
		// Any program may run a command it is given (ionice, chrt,
		// taskset, setpriv, script -c …): rather than a list of them,
		// deny and ask rules look at every tail of its arguments — except
		// of the few common programs known to take words as data, so that
		// "echo rm" or "git rm f" need no question. A program missing from
		// that list costs a question, never a hole.
		if dataArgs(base) {
			return
		}
		for k := 0; k < len(args) && k < maxMaybe; k++ {
			a.Maybe = append(a.Maybe, strings.Join(vals[1+k:], " "))
		}
		return
	}
	inner, p := spec.parse(args)
	if p.cwdMoves {
		a.CwdMoves = true
	}
	for _, o := range p.writes {
		a.Writes = append(a.Writes, Write{Op: base + " " + o.opt, Target: o.word})
	}
	if p.unsure >= 0 {
		// An option this reader does not know may take an argument, so the
		// command may start at any later word: let deny rules see each.
		for k := p.unsure + 1; k < len(args) && k <= p.unsure+maxWrappers; k++ {
			a.Looks = append(a.Looks, strings.Join(vals[1+k:], " "))
		}
	}
	if p.split != nil {
		a.Opaque = append(a.Opaque, base+" -S splits a string into a command")
		w.reparse(append([]Word{*p.split}, inner...))
		return
	}
	if p.noRun {
		return
	}
	if base == "xargs" {
		if len(inner) == 0 {
			return // xargs runs echo
		}
		if p.replace != "" {
			// Words holding the replacement string are built from input.
			inner = append([]Word(nil), inner...)
			for i := range inner {
				if strings.Contains(inner[i].Raw, p.replace) {
					inner[i].Static = false
				}
			}
		}
		fromXargs = true
	}
	if len(inner) == 0 {
		if fromXargs {
			a.Opaque = append(a.Opaque, "xargs runs a command named by its input")
		}
		return
	}
	w.look(inner, level+1, fromXargs)
}

// reparse reads words joined by spaces as a script, as eval does; words
// that are not static make nothing to read.
func (w *scriptWalker) reparse(words []Word) {
	vals := make([]string, 0, len(words))
	for _, x := range words {
		if !x.Static {
			return
		}
		vals = append(vals, x.Value)
	}
	if len(vals) > 0 {
		w.r.script(strings.Join(vals, " "), w.depth+1)
	}
}

// dataArgs reports whether name is a common program whose arguments are
// data, never a command it runs.
func dataArgs(name string) bool {
	switch name {
	case "echo", "printf", "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "type", "which",
		"whereis", "man", "help", "test", "[", "true", "false", "git", "make", "touch", "mkdir", "rmdir", "diff",
		"sort", "uniq", "cut", "tr", "basename", "dirname", "realpath", "readlink", "stat", "file", "du", "df",
		"pwd", "date", "id", "whoami", "hostname", "uname", "tee", "cp", "mv", "ln", "chmod", "chown",
		"go", "cargo", "npm", "yarn", "pnpm", "pip", "pip3", "jq", "sed", "find", "tar", "gzip", "zip", "unzip",
		"curl", "wget", "export", "unset", "set", "read", "local", "declare", "shift", "exit", "return", "wait", "kill":
		return true
	}
	return false
}

// isInterpreter reports whether name is a language's interpreter: what it
// runs is a program the Bash rules cannot read, wherever it comes from.
func isInterpreter(name string) bool {
	for _, p := range []string{"python", "perl", "ruby", "node", "php", "lua", "luajit", "tclsh", "wish", "Rscript", "deno", "bun", "osascript", "pwsh", "awk", "gawk", "mawk", "nawk", "expect", "guile", "racket", "julia", "scala", "groovy", "jshell", "irb", "ghci", "runghc", "swift", "elixir", "erl", "escript"} {
		if name == p || strings.HasPrefix(name, p) && strings.Trim(name[len(p):], "0123456789.") == "" {
			return true
		}
	}
	return false
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish":
		return true
	}
	return false
}

// shell reads a shell's arguments: -c's script is parsed in turn; a shell
// reading commands from its input is opaque; a shell running a script
// file is like any program, seen by name only.
func (w *scriptWalker) shell(name string, args []Word, fromXargs bool) {
	a := w.r.a
	command, stdin := false, false
	i := 0
options:
	for ; i < len(args); i++ {
		x := args[i]
		if !x.Static {
			a.Opaque = append(a.Opaque, fmt.Sprintf("%s options only known when it runs", name))
			return
		}
		v := x.Value
		switch {
		case v == "--" || v == "-":
			i++
			break options
		case v == "--help" || v == "--version":
			return
		case v == "--command" || strings.HasPrefix(v, "--command="):
			command = true
			if rest, ok := strings.CutPrefix(v, "--command="); ok {
				w.shellScript(name, Word{Raw: rest, Value: rest, Static: true})
				return
			}
		case v == "--rcfile" || v == "--init-file":
			i++
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			for _, c := range v[1:] {
				switch c {
				case 'c':
					command = true
				case 's':
					stdin = true
				case 'o', 'O':
					i++ // set -o NAME, shopt -O NAME
				}
			}
		default:
			break options
		}
	}
	switch {
	case command && i < len(args):
		w.shellScript(name, args[i])
	case command:
		// -c with nothing to run fails.
		if fromXargs {
			a.Opaque = append(a.Opaque, fmt.Sprintf("%s -c runs a script read by xargs", name))
		}
	case !stdin && i < len(args):
		// A script file (/dev/stdin and <(…) among them): readable as a
		// command, but its content is what runs.
		a.Hidden = append(a.Hidden, fmt.Sprintf("%s runs the script %s, which no rule reads", name, args[i].Raw))
	default:
		a.Opaque = append(a.Opaque, fmt.Sprintf("%s reads the commands it runs from its input", name))
	}
}

func (w *scriptWalker) shellScript(name string, script Word) {
	if !script.Static {
		w.r.a.Opaque = append(w.r.a.Opaque, fmt.Sprintf("%s -c runs a script only known when it runs", name))
		return
	}
	w.r.script(script.Value, w.depth+1)
}

// writes reports whether a redirection operator opens its target for
// writing; <> opens it for reading and writing, creating it.
func writes(op syntax.RedirOperator) bool {
	switch op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		return true
	}
	return false
}

func (w *scriptWalker) redirect(rd *syntax.Redirect) {
	if rd.Word == nil {
		return
	}
	target := w.word(rd.Word)
	op := rd.Op.String()
	if rd.N != nil {
		op = rd.N.Value + op
	}
	switch {
	case rd.Op == syntax.DplOut:
		// >&N duplicates a descriptor and >&- closes one; >&word with any
		// other word writes the file word, as &> does.
		if target.Static && isFdWord(target.Value) {
			return
		}
	case !writes(rd.Op):
		return
	}
	w.r.a.Writes = append(w.r.a.Writes, Write{Op: op, Target: target})
}

// isFdWord reports whether a >& target names a descriptor: "2", "-" or
// "2-" (move). An empty word ('>&""') names none: it is a file name the
// shell cannot open, not a descriptor, so it is judged as a write.
func isFdWord(s string) bool {
	if s == "" {
		return false
	}
	s = strings.TrimSuffix(s, "-")
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// word evaluates a word as far as it can be without running anything.
func (w *scriptWalker) word(wd *syntax.Word) Word {
	sw := Word{Raw: w.text(wd), Static: true}
	var b strings.Builder
	for i, part := range wd.Parts {
		switch x := part.(type) {
		case *syntax.Lit:
			if i == 0 && strings.HasPrefix(x.Value, "~") {
				sw.Tilde = true
			}
			if unescapeLit(&b, x.Value) {
				sw.Glob = true
			}
		case *syntax.SglQuoted:
			if x.Dollar {
				sw.Static = false // $'…' decodes escapes
			}
			b.WriteString(x.Value)
		case *syntax.DblQuoted:
			if x.Dollar {
				sw.Static = false // $"…" is translated
			}
			for _, q := range x.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					sw.Static = false
					continue
				}
				unescapeDbl(&b, lit.Value)
			}
		default:
			sw.Static = false
		}
	}
	sw.Value = b.String()
	return sw
}

// unescapeLit writes an unquoted literal with its backslashes removed and
// reports whether it holds an unescaped glob or brace character.
func unescapeLit(b *strings.Builder, s string) (glob bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		case c == '*' || c == '?' || c == '[' || c == '{':
			glob = true
		}
		b.WriteByte(c)
	}
	return glob
}

// unescapeDbl writes a literal from inside double quotes, where a
// backslash escapes only $ ` " \ and newline.
func unescapeDbl(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(c)
	}
}

// nesting is how deeply src nests brackets, quotes ignored: an upper
// bound, cheap to compute, that refuses hostile input before the parser
// recurses into it. (Keyword nesting, if inside if, is bounded by
// maxCommandBytes alone.)
func nesting(src string) int {
	depth, most := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '{', '[':
			depth++
			most = max(most, depth)
		case ')', '}', ']':
			depth = max(depth-1, 0)
		}
	}
	return most
}
