package subagent

import "github.com/cadre-dev/cadre/internal/subagent/prompt"

// Text a child produces — its result, its output so far, its progress, an
// announce — is model output, and reaches its parent inside the runtime's
// own tags (<task-notification>, <result>, <task_metadata>, <output>,
// <task_result>). Two things keep it data (DESIGN §17): every such text
// goes through prompt.Escape, so it can neither close the runtime's tags nor
// open tags of its own, and the parent is told, by untrustedNote, that it
// carries no user authority.

// untrustedNote is the preamble that frames a child's text.
var untrustedNote = prompt.Untrusted

// oneLine and clip are the prompt package's helpers, under the names the
// core's files use.
func oneLine(s string) string { return prompt.OneLine(s) }

func clip(s string, n int) string { return prompt.Clip(s, n) }
