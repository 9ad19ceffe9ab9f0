package replay

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// fileTools are the tools whose successful calls write the file their
// input names.
var fileTools = []string{"Write", "Edit", "MultiEdit", "NotebookEdit"}

// Writes lists the files (relative to the recorded workspace, slash
// separated, sorted) that the recorded run's successful file tool calls
// changed, so that a replay that leaves one of them as it was can be told.
// A Write of what the file already holds in workspace (where the replay
// starts from) changes nothing and is left out: it is what replaying a
// run in the workspace it left behind looks like.
func (r *Recording) Writes(recordedDir, workspace string) []string {
	seen := map[string]bool{}
	for _, c := range r.All {
		for _, t := range c.Turns {
			for _, use := range t.Message.ToolUses() {
				res, ok := t.Results[use.ID]
				if !ok || res.IsError || !slices.Contains(fileTools, use.Name) {
					continue
				}
				var in struct {
					FilePath     string  `json:"file_path"`
					NotebookPath string  `json:"notebook_path"`
					Content      *string `json:"content"`
				}
				if json.NewDecoder(bytes.NewReader(use.Input)).Decode(&in) != nil {
					continue
				}
				p := in.FilePath
				if p == "" {
					p = in.NotebookPath
				}
				if p == "" {
					continue
				}
				if !filepath.IsAbs(p) {
					p = filepath.Join(c.Cwd, p)
				}
				rel, err := filepath.Rel(recordedDir, p)
				if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
					continue
				}
				if use.Name == "Write" && in.Content != nil {
					if cur, err := os.ReadFile(filepath.Join(workspace, rel)); err == nil && string(cur) == *in.Content {
						continue
					}
				}
				seen[filepath.ToSlash(rel)] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
