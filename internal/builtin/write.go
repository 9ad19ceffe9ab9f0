package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed write.md
var writeDescription string

// WriteInput is Write's input, as Claude Code names it.
type WriteInput struct {
	FilePath string `json:"file_path" jsonschema:"The absolute path to the file to write (must be absolute, not relative)"`
	Content  string `json:"content" jsonschema:"The content to write to the file"`
}

// WriteMeta is the Meta of a Write result.
type WriteMeta struct {
	Type     string `json:"type"` // "create" or "update"
	FilePath string `json:"filePath"`
	Content  string `json:"content"`
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
	return t
}

func runWrite(ctx context.Context, o Options, env tool.Env, in WriteInput) (tool.Result, error) {
	if in.FilePath == "" {
		return tool.Errorf("file_path is empty: give the absolute path of the file to write."), nil
	}
	if ctx.Err() != nil {
		return tool.Result{}, cancelled(ctx, "Write")
	}
	path := resolve(o, env, in.FilePath)
	existed := false
	switch fi, err := os.Stat(path); {
	case err == nil && fi.IsDir():
		return tool.Errorf("%s is a directory; give the path of a file to write.", path), nil
	case err == nil && !fi.Mode().IsRegular():
		return tool.Errorf("%s is not a regular file (it is a device, pipe or socket); Write only writes files.", path), nil
	case err == nil:
		existed = true
	}
	if err := writeFile(path, in.Content); err != nil {
		return fsFailure("write", path, err)
	}
	meta := WriteMeta{Type: "create", FilePath: path, Content: in.Content}
	verb := "Created file"
	if existed {
		meta.Type, verb = "update", "Overwrote"
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
