package command

import (
	"fmt"
	"regexp"
	"slices"
	"sync"
)

// Kind says which layout a command was loaded from.
type Kind string

const (
	// KindCommand is a markdown file under a commands directory.
	KindCommand Kind = "command"
	// KindSkill is a SKILL.md file in its own folder under a skills
	// directory.
	KindSkill Kind = "skill"
)

// Where a command was found.
const (
	SourceUser    = "user"
	SourceProject = "project"
)

// Command is one slash command or skill. It is a value: callers may copy
// it freely, but must not change its slices, which a Set shares.
type Command struct {
	// Name is how it is invoked (/Name), case-folded. A command in a
	// subdirectory is namespaced by it: commands/frontend/component.md
	// is "frontend:component". A skill is named by its folder.
	Name string
	Kind Kind
	// Description is the frontmatter description or, for a command
	// without one, the first non-empty line of the body (heading marks
	// removed, at most 100 characters).
	Description  string
	ArgumentHint string
	// AllowedTools lists tool names and patterns ("Bash(git diff:*)").
	// nil means the field is absent; an empty, non-nil list means it was
	// given empty. For context: fork it restricts the child's tools.
	AllowedTools []string
	// NoGrant is set on an untrusted project's command (see package
	// trust): its AllowedTools still restrict a fork's pool but allow no
	// call, and a skill's grant nothing.
	NoGrant bool
	Model   string
	// Context is "" (run in the conversation) or "fork" (run in a forked
	// child, DESIGN.md S-F2).
	Context string
	// Agent is the subagent type a fork runs as; "" for the default.
	Agent string
	// Background runs a `context: fork` command in the background when
	// the user types it: its result comes as a task notification (S-F2).
	Background bool
	// DisableModelInvocation keeps the model from invoking it; only the
	// user can, by typing /Name.
	DisableModelInvocation bool
	// Body is the prompt template; Expand fills it.
	Body   string
	Path   string
	Source string // SourceUser or SourceProject
	// Line is the file line the body starts on.
	Line int
	// Warnings are things the loader accepted but the author should
	// fix, each "path:line: message".
	Warnings []string
}

// Problem is a file that could not be loaded, or a directory that could
// not be read.
type Problem struct {
	Path    string
	Line    int // 0 when no line applies
	Message string
}

// Error formats the problem as "path:line: message".
func (p Problem) Error() string {
	switch {
	case p.Path == "":
		return p.Message
	case p.Line > 0:
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Message)
	default:
		return p.Path + ": " + p.Message
	}
}

// Set holds the commands Load found, one per name. It is safe for
// concurrent use; Reload replaces its contents whole.
type Set struct {
	mu     sync.RWMutex
	byName map[string]Command
	sorted []Command
}

// Get returns the command invoked as /name (case ignored).
func (s *Set) Get(name string) (Command, bool) {
	if s == nil {
		return Command{}, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	c, ok := s.byName[foldName(name)]
	return c, ok
}

// All returns every command, sorted by name.
func (s *Set) All() []Command {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.sorted)
}

// Reload reads the folders Load read again and puts what it finds in
// place of s's commands: files added, changed or removed since take
// effect for the next lookup.
func (s *Set) Reload(cwd, userDir string) []Problem {
	fresh, problems := Load(cwd, userDir)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byName, s.sorted = fresh.byName, fresh.sorted
	return problems
}

var namePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9_:-]{0,63}$`) })

// validateName checks a folded command name.
func validateName(name string) error {
	if !namePattern().MatchString(name) {
		return fmt.Errorf("command name %q is not valid: want 1 to 64 letters, digits, '_', '-' or ':', starting with a letter or digit (rename the file or folder)", name)
	}
	return nil
}

// foldName folds ASCII letters only, so that no other rune (the Kelvin
// sign lowers to 'k') can alias a valid name.
func foldName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Narrowed returns a copy of s in which f has changed every command of
// the project (SourceProject); the user's are as they were. It is how an
// untrusted project's commands lose their grants (package trust).
func (s *Set) Narrowed(f func(*Command)) *Set {
	if s == nil {
		return nil
	}
	out := &Set{byName: make(map[string]Command, len(s.byName))}
	for name, c := range s.byName {
		if c.Source == SourceProject {
			f(&c)
		}
		out.byName[name] = c
	}
	for _, c := range s.sorted {
		out.sorted = append(out.sorted, out.byName[c.Name])
	}
	return out
}
