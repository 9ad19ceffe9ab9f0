package harness

import (
	"embed"

	"github.com/cadre-dev/cadre/internal/subagent/prompt"
)

//go:embed prompts/*.md
var promptFS embed.FS

// profilePrompt renders one of the tool descriptions, each named after its
// file ("harness_agent_spawn.md").
var profilePrompt = prompt.Files(promptFS, "prompts/*.md")
