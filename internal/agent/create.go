package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// NewFile is the short form of a Claude-format agent file: what the TUI's
// /agents create asks for.
type NewFile struct {
	Name, Description string
	// Tools is the allowlist; nil leaves the field out (every tool).
	Tools  []string
	Model  string
	Prompt string
}

// Render writes f as an agent file: YAML frontmatter (values quoted as
// YAML needs, so a description with a colon stays one string), then the
// prompt.
func (f NewFile) Render() ([]byte, error) {
	front := yaml.Node{Kind: yaml.MappingNode}
	add := func(key string, value *yaml.Node) {
		front.Content = append(front.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, value)
	}
	str := func(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }
	add("name", str(f.Name))
	add("description", str(f.Description))
	if f.Tools != nil {
		add("tools", str(strings.Join(f.Tools, ", ")))
	}
	if f.Model != "" {
		add("model", str(f.Model))
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	enc := yaml.NewEncoder(&b)
	if err := enc.Encode(&front); err != nil {
		return nil, fmt.Errorf("agent file frontmatter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("agent file frontmatter: %w", err)
	}
	b.WriteString("---\n")
	b.WriteString(strings.TrimSpace(f.Prompt))
	b.WriteString("\n")
	return b.Bytes(), nil
}

// Create writes f as dir/<name>.md, a project's Claude-format agent file
// (project is the project root, as for Load), after checking it exactly as
// Load will read it: a file that would not load is not written. An
// existing file is never overwritten. It returns the definition as Load
// will see it (warnings included) and the file's path.
func Create(dir, project string, f NewFile) (Definition, string, error) {
	f.Name = strings.TrimSpace(f.Name)
	if err := ValidateName(f.Name); err != nil {
		return Definition{}, "", err
	}
	if strings.TrimSpace(f.Description) == "" {
		return Definition{}, "", fmt.Errorf("agent %s: a description is required: it tells the main agent when to use it", f.Name)
	}
	for i, t := range f.Tools {
		if f.Tools[i] = strings.TrimSpace(t); f.Tools[i] == "" || strings.ContainsAny(f.Tools[i], ",\n") {
			return Definition{}, "", fmt.Errorf("agent %s: tool %d (%q) is not a tool name", f.Name, i+1, t)
		}
	}
	data, err := f.Render()
	if err != nil {
		return Definition{}, "", err
	}
	path := filepath.Join(dir, foldName(f.Name)+".md")
	d, problems, _ := parseFile(path, data, FormatClaude, SourceProject, project)
	if len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			errs[i] = p
		}
		return Definition{}, "", fmt.Errorf("agent %s would not load: %w", f.Name, errors.Join(errs...))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Definition{}, "", fmt.Errorf("agent %s: %w", f.Name, err)
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return Definition{}, "", fmt.Errorf("agent %s: %s exists already; edit it or pick another name", f.Name, path)
	}
	if err != nil {
		return Definition{}, "", fmt.Errorf("agent %s: %w", f.Name, err)
	}
	if _, err := out.Write(data); err != nil {
		out.Close()
		os.Remove(path)
		return Definition{}, "", fmt.Errorf("agent %s: write %s: %w", f.Name, path, err)
	}
	if err := out.Close(); err != nil {
		os.Remove(path)
		return Definition{}, "", fmt.Errorf("agent %s: write %s: %w", f.Name, path, err)
	}
	return d, path, nil
}
