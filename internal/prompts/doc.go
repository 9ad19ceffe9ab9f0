// Package prompts holds the main agent's model-facing prompt text as
// reviewable markdown, embedded into the binary. SDK users reach the
// default system prompt through cadre.DefaultSystemPrompt.
package prompts

import _ "embed"

// System is the main agent's default system prompt.
//
//go:embed system.md
var System string

// Shell is the template of the message that records a user's own shell
// command ("!command") and its output: .Command, .Output, .Failed.
//
//go:embed shell.tmpl
var Shell string
