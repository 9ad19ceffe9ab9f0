package memory

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"text/template"

	"github.com/cadre-dev/cadre/internal/tmplexec"
)

// Scopes.
const (
	ScopeUser    = "user"
	ScopeProject = "project"
	ScopeLocal   = "local"
)

// MaxLines of MEMORY.md go into the prompt; MaxBytes bounds what is read.
const (
	MaxLines = 200
	MaxBytes = 32 << 10
)

// Root is the directory a scope's memory must stay inside: the project's
// root for project and local, the home's .claude for user.
func Root(scope, project, home string) string {
	if scope == ScopeUser {
		return filepath.Join(home, ".claude")
	}
	return project
}

// Dir is the memory directory of agent in scope: project is the project
// root, home the user's home. "" when the scope is "" or cannot be placed
// (user scope without a home).
func Dir(scope, agent, project, home string) string {
	switch scope {
	case ScopeUser:
		if home == "" {
			return ""
		}
		return filepath.Join(home, ".claude", "agent-memory", agent)
	case ScopeProject:
		return filepath.Join(project, ".claude", "agent-memory", agent)
	case ScopeLocal:
		return filepath.Join(project, ".claude", "agent-memory-local", agent)
	}
	return ""
}

// CheckDir refuses a memory directory that is, or lies below, a symbolic
// link under root: a cloned repository could make
// .claude/agent-memory/<agent> a link to ../../.git, and the writes its
// agent is allowed there would land in .git/config (issue 22). Components
// that do not exist yet are fine: the agent makes them.
func CheckDir(dir, root string) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("agent memory %s is outside %s", dir, root)
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == "." || part == "" {
			continue
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("agent memory %s: %w", dir, err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("agent memory %s is not used: %s is a symbolic link, and a memory directory must not lead out of %s", dir, p, root)
		}
		if !fi.IsDir() {
			return fmt.Errorf("agent memory %s is not used: %s is not a directory", dir, p)
		}
	}
	return nil
}

// Rules are the allow rules that let the agent read and change its memory
// directory dir.
func Rules(dir string) []string {
	pattern := "/" + filepath.ToSlash(dir) + "/**"
	return []string{"Read(" + pattern + ")", "Edit(" + pattern + ")"}
}

//go:embed memory.md
var promptText string

var prompt = sync.OnceValue(func() *tmplexec.Template {
	return tmplexec.New(template.Must(template.New("memory").Parse(promptText)), nil)
})

// Prompt is the system prompt section of the memory at dir: the
// instructions and MEMORY.md's first MaxLines lines. A MEMORY.md that
// cannot be read is an error; a missing one is an empty memory.
//
// A project's memory directory is checked in, so someone else may have
// made MEMORY.md (or the directory) a link to a private file: MEMORY.md is
// read only when it resolves inside root (the project, or the home's
// .claude for the user scope).
func Prompt(dir, root string) (string, error) {
	path := filepath.Join(dir, "MEMORY.md")
	if real, err := filepath.EvalSymlinks(path); err == nil {
		realRoot, rerr := filepath.EvalSymlinks(root)
		if rerr != nil {
			realRoot = root
		}
		if rel, err := filepath.Rel(realRoot, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			return "", fmt.Errorf("agent memory %s is not read: it resolves to %s, outside %s", path, real, root)
		}
	}
	index, err := readIndex(path)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := prompt().Execute(&b, map[string]string{"Dir": dir, "Index": index}); err != nil {
		return "", fmt.Errorf("render the memory prompt: %w", err)
	}
	return strings.TrimSpace(b.String()), nil
}

func readIndex(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read agent memory: %w", err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return "", fmt.Errorf("read agent memory: %s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes))
	if err != nil {
		return "", fmt.Errorf("read agent memory %s: %w", path, err)
	}
	lines := strings.Split(strings.ToValidUTF8(string(data), ""), "\n")
	if len(lines) > MaxLines {
		lines = append(lines[:MaxLines], fmt.Sprintf("(MEMORY.md goes on past line %d: keep the index shorter)", MaxLines))
	}
	return strings.TrimSpace(strings.Join(lines, "\n")), nil
}
