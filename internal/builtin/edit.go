package builtin

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

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

// EditMeta is the Meta of an Edit result.
type EditMeta struct {
	FilePath     string `json:"filePath"`
	OldString    string `json:"oldString"`
	NewString    string `json:"newString"`
	ReplaceAll   bool   `json:"replaceAll"`
	Replacements int    `json:"replacements"`
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
	return t
}

// editSnippetContext is how many lines around an edit its result shows.
const editSnippetContext = 4

func runEdit(ctx context.Context, o Options, env tool.Env, in EditInput) (tool.Result, error) {
	if in.FilePath == "" {
		return tool.Errorf("file_path is empty: give the absolute path of the file to edit."), nil
	}
	if in.OldString == in.NewString {
		return tool.Errorf("No changes to make: old_string and new_string are exactly the same."), nil
	}
	if ctx.Err() != nil {
		return tool.Result{}, cancelled(ctx, "Edit")
	}
	path := resolve(o, env, in.FilePath)
	meta := EditMeta{FilePath: path, OldString: in.OldString, NewString: in.NewString, ReplaceAll: in.ReplaceAll}

	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return tool.Errorf("%s is a directory, not a file; give the path of a file to edit.", path), nil
	case err == nil && !fi.Mode().IsRegular():
		return tool.Errorf("%s is not a regular file (it is a device, pipe or socket); Edit only changes files.", path), nil
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && in.OldString == "":
		if err := writeFile(path, in.NewString); err != nil {
			return fsFailure("create", path, err)
		}
		return tool.Result{
			Content: tool.Text(fmt.Sprintf("Created file %s (%s).", path, plural(countLines(in.NewString), "line"))).Content,
			Meta:    meta,
		}, nil
	case errors.Is(err, fs.ErrNotExist):
		return tool.Errorf("File does not exist: %s. Check the path (Glob can find the file); to create a new file use Write, or Edit with an empty old_string.", path), nil
	case err != nil:
		return fsFailure("read", path, err)
	}
	content := string(data)

	if in.OldString == "" {
		if content != "" {
			return tool.Errorf("Cannot create %s: the file already exists and is not empty. To change it, give the text to replace as old_string; to replace it whole, use Write.", path), nil
		}
		if err := os.WriteFile(path, []byte(in.NewString), 0o644); err != nil {
			return fsFailure("write", path, err)
		}
		return tool.Result{
			Content: tool.Text(fmt.Sprintf("Wrote %s into the empty file %s.", plural(countLines(in.NewString), "line"), path)).Content,
			Meta:    meta,
		}, nil
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
		return tool.Errorf("old_string was not found in %s. It must match the file exactly, including whitespace and indentation (without Read's line-number prefix); Read the file to see its current text.", path), nil
	case n > 1 && !in.ReplaceAll:
		return tool.Errorf("old_string occurs %d times in %s, so the edit is ambiguous. Add surrounding lines to old_string to make it unique, or set replace_all to true to replace every occurrence.", n, path), nil
	}
	first := strings.Index(content, old)
	var updated string
	if in.ReplaceAll {
		updated = strings.ReplaceAll(content, old, repl)
	} else {
		updated = content[:first] + repl + content[first+len(old):]
		n = 1
	}
	// os.WriteFile truncates an existing file in place, so its mode (and
	// any hard links) survive.
	if err := os.WriteFile(path, []byte(updated), 0o644); err != nil {
		return fsFailure("write", path, err)
	}
	meta.Replacements = n

	if in.ReplaceAll {
		return tool.Result{
			Content: tool.Text(fmt.Sprintf("The file %s has been updated. All %s of old_string were replaced with new_string.", path, plural(n, "occurrence"))).Content,
			Meta:    meta,
		}, nil
	}
	startLine := strings.Count(updated[:first], "\n") + 1
	endLine := startLine + strings.Count(repl, "\n")
	snippet := numberedLines(updated, startLine-editSnippetContext, endLine+editSnippetContext, o.ReadLineMaxChars)
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
