package agent

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/cadre-dev/cadre/internal/excerpt"
	"github.com/cadre-dev/cadre/internal/frontmatter"
)

// parseFile reads one markdown agent file of the given format. It returns
// the definition (filled as far as it could be, for listings), every
// problem found, and skip when the file turns itself off (OpenCode's
// disable: true).
//
// within, when not empty, is the directory that {file:…} prompt references
// must stay inside, symbolic links resolved: the project root for a
// project's files, whose text a cloned repository chooses.
func parseFile(path string, data []byte, format Format, source, within string) (d Definition, problems []*Problem, skip bool) {
	base := strings.TrimSuffix(filepath.Base(path), ".md")
	d = Definition{Name: foldName(base), Format: format, Source: source, Path: path, Line: 1}
	md, prob := splitMarkdown(data)
	if prob != nil {
		prob.Path, prob.Name = path, d.Name
		return d, []*Problem{prob}, false
	}
	if !md.found {
		return d, []*Problem{{Path: path, Line: 1, Name: d.Name,
			Message: "no frontmatter: an agent file starts with a \"---\" line, then fields such as description:, then \"---\" and the prompt"}}, false
	}
	p := &parser{format: format, path: path, lines: true, offset: md.offset, name: d.Name, within: within, nodes: map[string]*yaml.Node{}}
	if md.warning != nil {
		md.warning.Path = path
		p.warnings = append(p.warnings, md.warning)
	}
	p.fields(md.root, &d)
	if p.disabled {
		return d, nil, true
	}
	p.finish(&d, md.body, base, filepath.Dir(path))
	return d, p.done(&d), false
}

// parseSettingsEntry reads agents.<key> of the settings.
func parseSettingsEntry(file, key string, n *yaml.Node) (Definition, []*Problem) {
	d := Definition{Name: foldName(key), Format: FormatJSON, Source: SourceSettings, Path: file}
	p := &parser{format: FormatJSON, path: file, prefix: "agents." + excerpt.Clip(key) + ".", name: d.Name, nodes: map[string]*yaml.Node{}}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "", "want an object with description, prompt, tools and other fields, got %s", frontmatter.Describe(n))
		return d, p.done(&d)
	}
	p.fields(n, &d)
	p.finish(&d, "", key, filepath.Dir(file))
	return d, p.done(&d)
}

// done attaches the warnings to d and names every problem, both in line
// order.
func (p *parser) done(d *Definition) []*Problem {
	byLine := func(a, b *Problem) int { return a.Line - b.Line }
	slices.SortStableFunc(p.warnings, byLine)
	slices.SortStableFunc(p.problems, byLine)
	for _, w := range p.warnings {
		d.Warnings = append(d.Warnings, w.Error())
	}
	for _, prob := range p.problems {
		prob.Name = d.Name
	}
	return p.problems
}

// finish settles the name, the prompt, the S-D3 rules and the defaults
// once every field has been read. base is the file name without .md (the
// settings key for JSON); dir is where {file:…} references start.
func (p *parser) finish(d *Definition, body, base, dir string) {
	p.settleName(d, base)

	fieldPrompt := ""
	if p.prompt != nil {
		fieldPrompt = p.text(p.prompt, "prompt")
		if p.format == FormatOpenCode && body == "" {
			fieldPrompt = p.fileRef(fieldPrompt, dir)
		}
	}
	switch {
	case body != "" && strings.TrimSpace(fieldPrompt) != "":
		p.warnAt(p.lineOf("prompt"), "prompt", "ignored: the file's body is the prompt")
		d.Prompt = body
	case body != "":
		d.Prompt = body
	default:
		d.Prompt = strings.TrimSpace(fieldPrompt)
	}

	if d.Description == "" {
		p.errorAt(p.lineOf("description"), "description", "is required: say when the parent agent should use this agent")
	}
	if p.format == FormatClaude {
		// Claude Code writes newlines in one-line descriptions as "\n".
		d.Description = strings.ReplaceAll(d.Description, `\n`, "\n")
	}

	// S-D3: a definition is a definition workspace, an inline body or a
	// remote URL.
	hasPath := d.Workspace != nil && d.Workspace.Path != ""
	if d.URL != "" {
		if hasPath {
			p.errorAt(p.lineOf("url"), "url", "cannot be combined with workspace.path: a remote agent has no definition workspace")
		} else if d.Workspace != nil {
			p.warnAt(p.lineOf("workspace"), "workspace", "ignored: a remote agent (url) runs on its server")
			d.Workspace = nil
		}
		if d.Prompt != "" {
			what := "a body"
			if body == "" {
				what = "a prompt"
			}
			p.errorAt(p.lineOf("url"), "url", "cannot be combined with %s: a remote agent's prompt lives on its server", what)
		}
	} else if hasPath && d.Prompt != "" {
		p.warnAt(p.lineOf("workspace"), "workspace", "body ignored: workspace AGENTS.md is the prompt base")
		d.Prompt = ""
	}
	if len(d.Headers) > 0 && d.URL == "" {
		p.warnAt(p.lineOf("headers"), "headers", "ignored: they are sent to a remote agent, and there is no url")
	}

	applyDefaults(d, p.turnsKey != "")
}

// applyDefaults fills in the format's defaults (DESIGN.md S-D1, S-D5):
// harness declarations run isolated with at most 10 turns; everything
// else shares the main workspace.
func applyDefaults(d *Definition, turnsSet bool) {
	mode := WorkspaceShared
	if d.Format == FormatHarness {
		mode = WorkspaceIsolated
		if !turnsSet {
			d.MaxTurns = DefaultHarnessMaxTurns
		}
		if d.Workspace == nil && d.URL == "" {
			d.Workspace = &Workspace{}
		}
	}
	if d.Workspace != nil && d.Workspace.Mode == "" {
		d.Workspace.Mode = mode
	}
}

func (p *parser) settleName(d *Definition, base string) {
	switch p.format {
	case FormatClaude:
		if p.nameNode == nil {
			p.errorAt(p.firstLine(), "name", "is required in a Claude Code agent file")
			return
		}
		name := strings.TrimSpace(p.text(p.nameNode, "name"))
		if err := ValidateName(name); err != nil {
			p.errorf(p.nameNode, "name", "%v", err)
			return
		}
		d.Name = foldName(name)
	case FormatJSON:
		if err := ValidateName(base); err != nil {
			p.errorAt(0, "", "%v", err)
		}
		if p.nameNode != nil && !strings.EqualFold(p.text(p.nameNode, "name"), base) {
			p.warnAt(p.lineOf("name"), "name", "ignored: the key (%s) is the agent name", excerpt.Quote(base))
		}
	default: // OpenCode and harness files: the file name is the id.
		if err := ValidateName(base); err != nil {
			p.errorAt(0, "", "file name: %v", err)
		}
		if p.nameNode != nil {
			p.warnAt(p.lineOf("name"), "name", "ignored: the file name (%s) is the agent name", excerpt.Quote(base))
		}
	}
	p.name = d.Name
}

// fileRef expands OpenCode's prompt: "{file:./prompt.txt}", relative to
// the agent file's directory.
func (p *parser) fileRef(s, dir string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "{file:") || !strings.HasSuffix(t, "}") {
		return s
	}
	ref := strings.TrimSpace(t[len("{file:") : len(t)-1])
	if rest, ok := strings.CutPrefix(ref, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			ref = filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(ref) {
		ref = filepath.Join(dir, ref)
	}
	if p.within != "" && !insideDir(p.within, ref) {
		p.errorf(p.prompt, "prompt", "cannot read %s: it lies outside the project, and a project's agent file may only name files inside it", excerpt.Quote(ref))
		return ""
	}
	data, err := readLimited(ref)
	if err != nil {
		// The reference is the file's text: quote it as an excerpt, and
		// the error without the path it would repeat.
		var pathErr *fs.PathError
		if errors.As(err, &pathErr) {
			err = pathErr.Err
		}
		p.errorf(p.prompt, "prompt", "cannot read %s: %v", excerpt.Quote(ref), err)
		return ""
	}
	return string(data)
}

// readLimited reads a file of at most maxFileSize bytes.
func readLimited(path string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if info.Size() > maxFileSize {
		return nil, errors.New("larger than 1 MiB")
	}
	return os.ReadFile(path)
}

// insideDir reports whether path lies in dir once the symbolic links of
// both are resolved. A path that cannot be resolved (it does not exist)
// is judged as written; reading it fails anyway.
func insideDir(dir, path string) bool {
	resolve := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	rel, err := filepath.Rel(resolve(dir), resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
