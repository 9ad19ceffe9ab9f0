package command

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Load reads every source in precedence order; for each name the last
// valid command wins:
//
//  1. $CADRE_HOME/commands/**/*.md, then $CADRE_HOME/skills/*/SKILL.md
//     (userDir is $CADRE_HOME; "" skips them);
//  2. in cwd ("" skips them): .claude/commands, .claude/skills,
//     .cadre/commands, .cadre/skills.
//
// It never fails as a whole: a file that cannot be loaded is a Problem
// (path:line: message) and the rest load. An invalid file never shadows
// a valid command of the same name.
func Load(cwd, userDir string) (*Set, []Problem) {
	l := &loader{byName: map[string]Command{}}
	if userDir != "" {
		l.commands(filepath.Join(userDir, "commands"), SourceUser)
		l.skills(filepath.Join(userDir, "skills"), SourceUser)
	}
	if cwd != "" {
		// OpenCode's skill folders first: a .claude or .cadre skill of the
		// same name wins.
		for _, dir := range []string{"skill", "skills"} {
			l.skills(filepath.Join(cwd, ".opencode", dir), SourceProject)
		}
		for _, dir := range []string{".claude", ".cadre"} {
			l.commands(filepath.Join(cwd, dir, "commands"), SourceProject)
			l.skills(filepath.Join(cwd, dir, "skills"), SourceProject)
		}
	}
	s := &Set{byName: l.byName}
	for _, c := range l.byName {
		s.sorted = append(s.sorted, c)
	}
	sort.Slice(s.sorted, func(i, j int) bool { return s.sorted[i].Name < s.sorted[j].Name })
	return s, l.problems
}

type loader struct {
	byName   map[string]Command
	problems []Problem
}

// add parses one file and keeps it when it is valid.
func (l *loader) add(path string, kind Kind, name, source string) {
	data, err := readLimited(path)
	if err != nil {
		l.problems = append(l.problems, Problem{Path: path, Message: fmt.Sprintf("cannot read %s file: %v", kind, err)})
		return
	}
	c, problems := parseFile(path, data, kind, name, source)
	if len(problems) > 0 {
		l.problems = append(l.problems, problems...)
		return
	}
	l.byName[c.Name] = c
}

// commands loads every *.md file under root, at any depth; each
// subdirectory adds a namespace ("frontend/component.md" is
// "frontend:component"). Dot files and dot directories are skipped;
// symbolic links to directories are not followed, so a link loop cannot
// trap the walk. A missing root is not a problem.
func (l *loader) commands(root string, source string) {
	if info, err := os.Stat(root); err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.problems = append(l.problems, Problem{Path: root, Message: fmt.Sprintf("cannot read commands directory: %v", err)})
		}
		return
	} else if !info.IsDir() {
		l.problems = append(l.problems, Problem{Path: root, Message: "is not a directory: commands are *.md files in a commands directory"})
		return
	}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			l.problems = append(l.problems, Problem{Path: path, Message: fmt.Sprintf("cannot read: %v", err)})
			if d != nil && d.IsDir() && path != root {
				return fs.SkipDir
			}
			return nil
		}
		if path == root {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if info, err := os.Stat(path); err == nil && info.IsDir() {
				return nil
			}
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return nil
		}
		name := strings.ReplaceAll(filepath.ToSlash(strings.TrimSuffix(rel, ".md")), "/", ":")
		l.add(path, KindCommand, foldName(name), source)
		return nil
	})
	if err != nil {
		l.problems = append(l.problems, Problem{Path: root, Message: fmt.Sprintf("cannot read commands directory: %v", err)})
	}
}

// skills loads root/<name>/SKILL.md for each folder in root, sorted by
// name. Folders without a SKILL.md, files beside it (scripts, references)
// and files directly in root are not skills and are ignored. A folder may
// be a symbolic link.
func (l *loader) skills(root string, source string) {
	list, err := os.ReadDir(root)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.problems = append(l.problems, Problem{Path: root, Message: fmt.Sprintf("cannot read skills directory: %v", err)})
		}
		return
	}
	for _, de := range list {
		if strings.HasPrefix(de.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, de.Name())
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			continue
		}
		path := filepath.Join(dir, "SKILL.md")
		if _, err := os.Lstat(path); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				l.problems = append(l.problems, Problem{Path: path, Message: fmt.Sprintf("cannot read skill file: %v", err)})
			}
			continue
		}
		l.add(path, KindSkill, foldName(de.Name()), source)
	}
}

// readLimited reads a regular file of at most maxFileSize bytes.
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
