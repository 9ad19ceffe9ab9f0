package agent

import (
	"fmt"
	"sort"
	"strings"
)

// Report describes, one line per file (or settings entry, or SDK source),
// what went wrong loading the definitions: a definition that did not load
// (with its first problem, file:line, and how many more there are) and a
// definition that loaded with warnings (unknown fields and the like). A
// headless run prints it, so a broken or mistyped agent file is never a
// silent no-op; `cadre agents` lists every problem.
func (r *Registry) Report() []string {
	type findings struct {
		problems []string
		warnings []string
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	byFile := map[string]*findings{}
	at := func(path string) *findings {
		f := byFile[path]
		if f == nil {
			f = &findings{}
			byFile[path] = f
		}
		return f
	}
	for _, p := range r.problems {
		f := at(p.Path)
		f.problems = append(f.problems, strings.TrimPrefix(p.Error(), p.Path))
	}
	for _, e := range r.entries {
		if len(e.Definition.Warnings) == 0 {
			continue
		}
		f := at(e.Definition.Path)
		for _, w := range e.Definition.Warnings {
			// Warnings carry their location already: "path:line: …".
			f.warnings = append(f.warnings, strings.TrimPrefix(w, e.Definition.Path))
		}
	}
	paths := make([]string, 0, len(byFile))
	for p := range byFile {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out []string
	for _, path := range paths {
		f := byFile[path]
		first, more, tail := "", 0, ""
		if len(f.problems) > 0 {
			first, more, tail = f.problems[0], len(f.problems)-1+len(f.warnings), "; not loaded"
		} else {
			first, more = f.warnings[0], len(f.warnings)-1
		}
		line := "agents: " + path + flatten(first)
		if more > 0 {
			line += fmt.Sprintf(" (and %d more)", more)
		}
		out = append(out, line+tail+" (cadre agents shows the details)")
	}
	return out
}

// flatten keeps a report on one line: a problem's text may hold newlines
// (a YAML error, an excerpt).
func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }
