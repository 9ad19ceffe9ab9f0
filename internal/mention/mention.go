package mention

import (
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"text/template"
	"unicode"
	"unicode/utf8"

	"github.com/cadre-dev/cadre/internal/tmplexec"
)

// ErrOutside is the error for a path that leaves the workspace.
var ErrOutside = errors.New("outside the workspace")

// MaxSize is the largest file attached: a mention is for a file a person
// would paste, not for a data set.
const MaxSize = 256 << 10

// File is a file a message attaches.
type File struct {
	// Mention is what followed "@"; Path the file's path relative to the
	// workspace, with slashes.
	Mention, Path string
	Content       string
	Lines         int
}

// Tokens are the words of text that start with "@" (at the start or
// after white space), without the "@" and without trailing punctuation
// that ends a sentence ("see @main.go." names main.go).
func Tokens(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, unicode.IsSpace) {
		if !strings.HasPrefix(w, "@") {
			continue
		}
		w = strings.TrimRight(w[1:], ".,;:!?)]}'\"")
		if w != "" && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// local is name as a path relative to root, or ErrOutside.
func local(root, name string) (string, error) {
	p := filepath.FromSlash(name)
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return "", fmt.Errorf("@%s: %w", name, ErrOutside)
		}
		p = rel
	}
	p = filepath.Clean(p)
	if !filepath.IsLocal(p) && p != "." {
		return "", fmt.Errorf("@%s: %w", name, ErrOutside)
	}
	// A link inside that points out is an escape too: say so, rather than
	// the os.Root's bare refusal below.
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("@%s: the workspace: %w", name, err)
	}
	if real, err := filepath.EvalSymlinks(filepath.Join(root, p)); err == nil {
		rel, err := filepath.Rel(realRoot, real)
		if err != nil || !(filepath.IsLocal(rel) || rel == ".") {
			return "", fmt.Errorf("@%s: a link that leads %w", name, ErrOutside)
		}
	}
	return p, nil
}

// Read reads the file name (relative to root, or absolute inside it).
// A missing file is an error that wraps fs.ErrNotExist; a path that leaves
// root wraps ErrOutside; directories, files larger than MaxSize and
// binary files are refused.
func Read(root, name string) (File, error) {
	p, err := local(root, name)
	if err != nil {
		return File{}, err
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return File{}, fmt.Errorf("@%s: the workspace: %w", name, err)
	}
	defer r.Close()
	f, err := r.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return File{}, fmt.Errorf("@%s: no such file in the workspace: %w", name, fs.ErrNotExist)
		}
		return File{}, fmt.Errorf("@%s: %w", name, err)
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return File{}, fmt.Errorf("@%s: %w", name, err)
	case info.IsDir():
		return File{}, fmt.Errorf("@%s is a directory: mention a file in it", name)
	case !info.Mode().IsRegular():
		return File{}, fmt.Errorf("@%s is not a regular file", name)
	case info.Size() > MaxSize:
		return File{}, fmt.Errorf("@%s is %d KiB: files up to %d KiB are attached", name, info.Size()>>10, MaxSize>>10)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return File{}, fmt.Errorf("@%s: %w", name, err)
	}
	if len(data) > MaxSize {
		return File{}, fmt.Errorf("@%s grew past %d KiB while read", name, MaxSize>>10)
	}
	if !utf8.Valid(data) || slices.Contains(data, 0) {
		return File{}, fmt.Errorf("@%s is not a text file", name)
	}
	text := string(data)
	return File{Mention: name, Path: filepath.ToSlash(p), Content: strings.TrimRight(text, "\n"), Lines: strings.Count(strings.TrimRight(text, "\n"), "\n") + 1}, nil
}

//go:embed attachment.tmpl
var attachmentText string

// attachment is parsed on first use, and runs on tmplexec, not
// text/template's executor (see its doc.go).
var attachment = sync.OnceValue(func() *tmplexec.Template {
	return tmplexec.New(template.Must(template.New("attachment").Parse(attachmentText)), nil)
})

// Block is the text that attaches f to a message for the model.
func Block(f File) string {
	var b strings.Builder
	if err := attachment().Execute(&b, f); err != nil {
		// The template and File are fixed: this cannot fail.
		panic(err)
	}
	return strings.TrimRight(b.String(), "\n")
}

// Complete are the paths under root that complete prefix, up to limit:
// the entries of prefix's directory whose names start with the rest,
// directories with a trailing slash, hidden ones only when the rest starts
// with a dot. Nothing outside root is listed.
func Complete(root, prefix string, limit int) []string {
	dir, base := "", prefix
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		dir, base = prefix[:i+1], prefix[i+1:]
	}
	p := "."
	if dir != "" {
		var err error
		if p, err = local(root, dir); err != nil {
			return nil
		}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil
	}
	defer r.Close()
	f, err := r.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	var out []string
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if !strings.HasPrefix(strings.ToLower(name), strings.ToLower(base)) {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		if out = append(out, dir+name); len(out) == limit {
			break
		}
	}
	return out
}
