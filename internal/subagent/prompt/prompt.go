package prompt

import (
	"bytes"
	_ "embed"
	"io/fs"
	"strings"
	"sync"
	"text/template"

	"github.com/cadre-dev/cadre/internal/tmplexec"
)

// Lazy returns a function that parses the template on its first call: a
// process that never renders one (cadre version, a run without subagents)
// does not pay for it at start-up. They run on tmplexec, not
// text/template's executor (see its doc.go).
func Lazy(name, text string, funcs template.FuncMap) func() *tmplexec.Template {
	return sync.OnceValue(func() *tmplexec.Template {
		return tmplexec.New(template.Must(template.New(name).Funcs(funcs).Parse(text)), funcs)
	})
}

// Files returns a renderer of the templates in fsys that match pattern,
// each named after its file and parsed on first use, as Render renders.
func Files(fsys fs.FS, pattern string) func(name string, data any) string {
	all := sync.OnceValue(func() *tmplexec.Template {
		return tmplexec.New(template.Must(template.ParseFS(fsys, pattern)), nil)
	})
	return func(name string, data any) string { return Render(all().Lookup(name), data) }
}

// FrameFuncs let a template escape a child's text ("escape") and frame it
// ("untrusted").
func FrameFuncs() template.FuncMap {
	return template.FuncMap{
		"escape":    Escape,
		"untrusted": func() string { return Untrusted },
	}
}

// Render executes t with data, trimmed. The templates are the runtime's
// own and their data is fixed in shape: a failure is a bug, and panics so
// that the tests surface it loudly.
func Render(t *tmplexec.Template, data any) string {
	// Rendered for every spawn and notification: a buffer sized for a
	// prompt rarely grows, and String keeps an exact copy, not the
	// buffer's spare room, alive in the conversation.
	var b bytes.Buffer
	b.Grow(1024)
	if err := t.Execute(&b, data); err != nil {
		panic("subagent: template " + t.Name() + ": " + err.Error())
	}
	return strings.TrimSpace(b.String())
}

// OneLine is s with its runs of white space, line breaks included, made
// one space.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Clip is OneLine(s), cut to n runes with an ellipsis when longer.
func Clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
