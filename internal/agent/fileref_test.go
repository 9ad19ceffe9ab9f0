package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project's agent file is the repository's text: its {file:…} prompt
// reference must not read a file outside the project, or a cloned
// repository could send any file the user can read (an ssh key, say) to
// the model provider as a subagent's system prompt.
func TestPromptFileStaysInTheProject(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "id_rsa")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY MATERIAL\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ref string
		link      bool // .opencode/agent/prompts/link.txt -> the secret
		ok        bool
	}{
		{name: "inside", ref: "./prompts/p.txt", ok: true},
		{name: "inside via the project root", ref: "../../docs/p.txt", ok: true},
		{name: "absolute outside", ref: secret},
		{name: "dot-dot outside", ref: "DOTDOT"},
		{name: "symlink outside", ref: "./prompts/link.txt", link: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tree(t, nil)
			ref := tc.ref
			if ref == "DOTDOT" {
				rel, err := filepath.Rel(filepath.Join(root, ".opencode/agent"), secret)
				if err != nil || !strings.HasPrefix(rel, "..") {
					t.Fatalf("no relative way from the project to the secret: %q, %v", rel, err)
				}
				ref = rel
			}
			root = tree(t, map[string]string{
				".opencode/agent/p.md":          "---\ndescription: d\nprompt: \"{file:" + ref + "}\"\n---\n",
				".opencode/agent/prompts/p.txt": "Prompt from a file.\n",
				"docs/p.txt":                    "Prompt from a file.\n",
			})
			if tc.link {
				if err := os.Symlink(secret, filepath.Join(root, ".opencode/agent/prompts/link.txt")); err != nil {
					t.Fatal(err)
				}
			}
			r := Load(LoadOptions{Cwd: root})
			e := entryAt(t, r, filepath.Join(root, ".opencode/agent/p.md"))
			if strings.Contains(e.Definition.Prompt, "PRIVATE") {
				t.Fatalf("the prompt holds the outside file: %q", e.Definition.Prompt)
			}
			if tc.ok {
				if e.Err != nil || e.Definition.Prompt != "Prompt from a file." {
					t.Errorf("prompt %q, err %v", e.Definition.Prompt, e.Err)
				}
				return
			}
			if e.Err == nil || !strings.Contains(e.Err.Error(), "p.md:3: prompt:") || !strings.Contains(e.Err.Error(), "outside the project") {
				t.Errorf("err = %v, want a problem at p.md:3 saying the file is outside the project", e.Err)
			}
		})
	}
}
