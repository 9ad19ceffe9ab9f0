// Package prompts holds cadre's model-facing prompt text as reviewable
// markdown, embedded into the binary.
package prompts

import _ "embed"

// System is the main agent's default system prompt.
//
//go:embed system.md
var System string
