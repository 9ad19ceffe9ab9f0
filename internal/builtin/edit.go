package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/tool"
)

//go:embed edit.md
var editDescription string

// EditInput is Edit's input, as Claude Code names it.
type EditInput struct {
	FilePath   string `json:"file_path" jsonschema:"The absolute path to the file to modify"`
	OldString  string `json:"old_string" jsonschema:"The text to replace"`
	NewString  string `json:"new_string" jsonschema:"The text to replace it with (must be different from old_string)"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"Replace all occurrences of old_string (default false)"`
}

// EditMeta is the Meta of an Edit result: Claude Code's FileEditOutput.
type EditMeta struct {
	FilePath   string `json:"filePath"`
	OldString  string `json:"oldString"`
	NewString  string `json:"newString"`
	ReplaceAll bool   `json:"replaceAll"`
	// OriginalFile is the file before the edit; null when it did not
	// exist or is larger than originalFileMax.
	OriginalFile *string `json:"originalFile"`
	// StructuredPatch is the change as diff hunks; empty when the
	// changed text is too large to diff.
	StructuredPatch []Hunk `json:"structuredPatch"`
	// UserModified is always false: an approval that changes the input
	// runs the changed input, which this result describes.
	UserModified bool `json:"userModified"`
	Replacements int  `json:"replacements"`
}

// Edit returns the Edit tool.
func Edit(opts Options) tool.Tool {
	o := opts.withDefaults()
	t := tool.New(tool.Info{
		Name:        "Edit",
		Description: describe("Edit", editDescription, o),
		InputSchema: schema("edit"),
		Access:      tool.AccessEdit,
	}, func(ctx context.Context, env tool.Env, in EditInput) (tool.Result, error) {
		return runEdit(ctx, o, env, in)
	})
	t.TargetOf = func(env tool.Env, in EditInput) string { return resolve(o, env, in.FilePath) }
	return &editTool{t, o}
}

// editTool is Edit, which can show an approval the change it would make.
type editTool struct {
	*tool.Typed[EditInput]
	o Options
}

// Preview implements permission.Previewer; a call that would fail shows
// nothing (it fails when it runs, and says why).
func (t *editTool) Preview(env tool.Env, input json.RawMessage) (*permission.Change, error) {
	var in EditInput
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	p, failed, err := planEdit(t.o, env, in)
	if err != nil || failed != nil {
		return nil, err
	}
	return p.change(), nil
}

// editSnippetContext is how many lines around an edit its result shows.
const editSnippetContext = 4

// editPlan is what an Edit call does, worked out before anything is
// written: the approval shows it, the call carries it out.
type editPlan struct {
	path     string
	existed  bool // the file exists (it may be empty)
	original string
	updated  string
	n        int    // replacements
	first    int    // offset of the first replacement
	repl     string // new_string, with the file's line endings
}

// change is the plan as an approval shows it.
func (p *editPlan) change() *permission.Change {
	return fileChange(p.path, !p.existed, p.original, p.updated)
}

// fileChange describes turning old into new at path for an approval.
func fileChange(path string, created bool, old, new string) *permission.Change {
	c := &permission.Change{Path: path, Create: created}
	hunks, ok := structuredPatch(old, new)
	if !ok {
		return c
	}
	c.Diff = unifiedDiff(path, created, hunks)
	if len(old)+len(new) <= changeTextMax {
		c.Old, c.New = old, new
	}
	return c
}

// planEdit checks an Edit call and works out the file it leaves; failed
// is set when the call cannot be made, saying why.
func planEdit(o Options, env tool.Env, in EditInput) (p *editPlan, failed *tool.Result, err error) {
	fail := func(format string, args ...any) (*editPlan, *tool.Result, error) {
		r := tool.Errorf(format, args...)
		return nil, &r, nil
	}
	if in.FilePath == "" {
		return fail("file_path is empty: give the absolute path of the file to edit.")
	}
	if in.OldString == in.NewString {
		return fail("No changes to make: old_string and new_string are exactly the same.")
	}
	path := resolve(o, env, in.FilePath)
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return fail("%s is a directory, not a file; give the path of a file to edit.", path)
	case err == nil && !fi.Mode().IsRegular():
		return fail("%s is not a regular file (it is a device, pipe or socket); Edit only changes files.", path)
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && in.OldString == "":
		return &editPlan{path: path, updated: in.NewString, repl: in.NewString}, nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return fail("File does not exist: %s. Check the path (Glob can find the file); to create a new file use Write, or Edit with an empty old_string.", path)
	case err != nil:
		r, err := fsFailure("read", path, err)
		if err != nil {
			return nil, nil, err
		}
		return nil, &r, nil
	}
	content := string(data)
	p = &editPlan{path: path, existed: true, original: content}

	if in.OldString == "" {
		if content != "" {
			return fail("Cannot create %s: the file already exists and is not empty. To change it, give the text to replace as old_string; to replace it whole, use Write.", path)
		}
		p.updated, p.repl = in.NewString, in.NewString
		return p, nil, nil
	}

	old, repl := in.OldString, in.NewString
	if !strings.Contains(content, old) && strings.Contains(content, "\r\n") && !strings.Contains(old, "\r") {
		// The model writes "\n"; a CRLF file should keep its line endings.
		crlf := strings.NewReplacer("\n", "\r\n")
		if o2 := crlf.Replace(old); strings.Contains(content, o2) {
			old, repl = o2, crlf.Replace(repl)
		}
	}
	n := strings.Count(content, old)
	switch {
	case n == 0:
		return fail("old_string was not found in %s. It must match the file exactly, including whitespace and indentation (without Read's line-number prefix); Read the file to see its current text.", path)
	case n > 1 && !in.ReplaceAll:
		return fail("old_string occurs %d times in %s, so the edit is ambiguous. Add surrounding lines to old_string to make it unique, or set replace_all to true to replace every occurrence.", n, path)
	}
	p.first, p.repl = strings.Index(content, old), repl
	if in.ReplaceAll {
		p.updated, p.n = strings.ReplaceAll(content, old, repl), n
	} else {
		p.updated, p.n = content[:p.first]+repl+content[p.first+len(old):], 1
	}
	return p, nil, nil
}

func runEdit(ctx context.Context, o Options, env tool.Env, in EditInput) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, cancelled(ctx, "Edit")
	}
	p, failed, err := planEdit(o, env, in)
	if err != nil || failed != nil {
		if failed != nil {
			return *failed, nil
		}
		return tool.Result{}, err
	}
	path := p.path
	meta := EditMeta{FilePath: path, OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll, Replacements: p.n}
	if p.existed && len(p.original) <= originalFileMax {
		meta.OriginalFile = &p.original
	}
	if hunks, ok := structuredPatch(p.original, p.updated); ok {
		meta.StructuredPatch = hunks
	} else {
		meta.StructuredPatch = []Hunk{}
	}

	switch {
	case !p.existed:
		if err := writeFile(path, p.updated); err != nil {
			return fsFailure("create", path, err)
		}
		return tool.Result{
			Content: tool.Text(fmt.Sprintf("Created file %s (%s).", path, plural(countLines(p.updated), "line"))).Content,
			Meta:    meta,
		}, nil
	case in.OldString == "":
		if err := os.WriteFile(path, []byte(p.updated), 0o644); err != nil {
			return fsFailure("write", path, err)
		}
		return tool.Result{
			Content: tool.Text(fmt.Sprintf("Wrote %s into the empty file %s.", plural(countLines(p.updated), "line"), path)).Content,
			Meta:    meta,
		}, nil
	}
	// os.WriteFile truncates an existing file in place, so its mode (and
	// any hard links) survive.
	if err := os.WriteFile(path, []byte(p.updated), 0o644); err != nil {
		return fsFailure("write", path, err)
	}

	if in.ReplaceAll {
		return tool.Result{
			Content: tool.Text(fmt.Sprintf("The file %s has been updated. All %s of old_string were replaced with new_string.", path, plural(p.n, "occurrence"))).Content,
			Meta:    meta,
		}, nil
	}
	startLine := strings.Count(p.updated[:p.first], "\n") + 1
	endLine := startLine + strings.Count(p.repl, "\n")
	snippet := numberedLines(p.updated, startLine-editSnippetContext, endLine+editSnippetContext, o.ReadLineMaxChars)
	return tool.Result{
		Content: tool.Text(fmt.Sprintf("The file %s has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n%s", path, snippet)).Content,
		Meta:    meta,
	}, nil
}

// numberedLines formats lines from..to (1-based, clamped) of s as cat -n
// does, truncating long lines.
func numberedLines(s string, from, to, maxChars int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	from = max(from, 1)
	to = min(to, len(lines))
	var b strings.Builder
	for i := from; i <= to; i++ {
		text, cut := truncateRunes(strings.TrimSuffix(lines[i-1], "\r"), maxChars)
		fmt.Fprintf(&b, "%6d\t%s", i, text)
		if cut > 0 {
			fmt.Fprintf(&b, "… [%d characters truncated]", cut)
		}
		if i < to {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
