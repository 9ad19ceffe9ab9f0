package gateway

import (
	"embed"
	"sync"
	"text/template"

	"github.com/cadre-dev/cadre/internal/subagent/prompt"
	"github.com/cadre-dev/cadre/internal/tmplexec"
)

//go:embed prompts/*.md
var promptFS embed.FS

// prompts holds the tool descriptions, each named after its file
// ("gateway_sessions_spawn.md").
var prompts = sync.OnceValue(func() *tmplexec.Template {
	return tmplexec.New(template.Must(template.ParseFS(promptFS, "prompts/*.md")), nil)
})

func profilePrompt(name string, data any) string {
	return prompt.Render(prompts().Lookup(name), data)
}
