package gateway

import (
	"embed"

	"github.com/cadre-dev/cadre/internal/subagent/prompt"
)

//go:embed prompts/*.md
var promptFS embed.FS

// profilePrompt renders one of the tool descriptions, each named after its
// file ("gateway_sessions_spawn.md").
var profilePrompt = prompt.Files(promptFS, "prompts/*.md")
