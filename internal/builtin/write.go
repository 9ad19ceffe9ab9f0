package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cadre-dev/cadre/internal/permission"
	"github.com/cadre-dev/cadre/tool"
)

//go:embed write.md
var writeDescription string

// WriteInput is Write's input, as Claude Code names it.
type WriteInput struct {
	FilePath string `json:"file_path" jsonschema:"The absolute path to the file to write (must be absolute, not relative)"`
	Content  string `json:"content" jsonschema:"The content to write to the file"`
}

// WriteMeta is the Meta of a Write result: Claude Code's FileWriteOutput.
type WriteMeta struct {
	Type     string `json:"type"` // "create" or "update"
	FilePath string `json:"filePath"`
	Content  string `json:"content"`
	// StructuredPatch is the change as diff hunks: every line added for
	// a new file; empty when nothing changed or the changed text is too
	// large to diff.
	StructuredPatch []Hunk `json:"structuredPatch"`
	// OriginalFile is the file before; null for a new file or one larger
	// than originalFileMax.
	OriginalFile *string `json:"originalFile"`
}

// Write returns the Write tool.
func Write(opts Options) tool.Tool {
	o := opts.withDefaults()
	t := tool.New(tool.Info{
		Name:        "Write",
		Description: describe("Write", writeDescription, o),
		InputSchema: schema("write"),
		Access:      tool.AccessEdit,
	}, func(ctx context.Context, env tool.Env, in WriteInput) (tool.Result, error) {
		return runWrite(ctx, o, env, in)
	})
	t.TargetOf = func(env tool.Env, in WriteInput) string { return resolve(o, env, in.FilePath) }
	return &writeTool{t, o}
}

// writeTool is Write, which can show an approval the change it would
// make.
type writeTool struct {
	*tool.Typed[WriteInput]
	o Options
}

// Preview implements permission.Previewer.
func (t *writeTool) Preview(env tool.Env, input json.RawMessage) (*permission.Change, error) {
	var in WriteInput
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	if in.FilePath == "" {
		return nil, nil
	}
	path := resolve(t.o, env, in.FilePath)
	old, existed, err := readExisting(path)
	if err != nil {
		return nil, err
	}
	return fileChange(path, !existed, old, in.Content), nil
}

// readExisting reads the regular file at path; existed is false when
// there is none.
func readExisting(path string) (content string, existed bool, err error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", false, nil
	case err != nil:
		return "", false, err
	case !fi.Mode().IsRegular():
		return "", false, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	return string(data), true, nil
}

func runWrite(ctx context.Context, o Options, env tool.Env, in WriteInput) (tool.Result, error) {
	if in.FilePath == "" {
		return tool.Errorf("file_path is empty: give the absolute path of the file to write."), nil
	}
	if ctx.Err() != nil {
		return tool.Result{}, cancelled(ctx, "Write")
	}
	path := resolve(o, env, in.FilePath)
	switch fi, err := os.Stat(path); {
	case err == nil && fi.IsDir():
		return tool.Errorf("%s is a directory; give the path of a file to write.", path), nil
	case err == nil && !fi.Mode().IsRegular():
		return tool.Errorf("%s is not a regular file (it is a device, pipe or socket); Write only writes files.", path), nil
	}
	// The old content makes the patch; a file that cannot be read is
	// overwritten all the same, with no patch.
	old, existed, readErr := readExisting(path)
	if readErr != nil {
		_, statErr := os.Lstat(path)
		existed = statErr == nil
	}
	if err := writeFile(path, in.Content); err != nil {
		return fsFailure("write", path, err)
	}
	meta := WriteMeta{Type: "create", FilePath: path, Content: in.Content, StructuredPatch: []Hunk{}}
	if readErr == nil {
		if hunks, ok := structuredPatch(old, in.Content); ok {
			meta.StructuredPatch = hunks
		}
	}
	verb := "Created file"
	if existed {
		meta.Type, verb = "update", "Overwrote"
		if readErr == nil && len(old) <= originalFileMax {
			meta.OriginalFile = &old
		}
	}
	return tool.Result{
		Content: tool.Text(fmt.Sprintf("%s %s (%s, %s).", verb, path, plural(len(in.Content), "byte"), plural(countLines(in.Content), "line"))).Content,
		Meta:    meta,
	}, nil
}

// writeFile writes content to path, creating parent directories. An
// existing file keeps its mode.
func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}
