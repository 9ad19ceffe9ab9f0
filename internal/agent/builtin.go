package agent

import (
	_ "embed"
	"fmt"
)

//go:embed general-purpose.md
var generalPurposeFile string

// GeneralPurposeName is the built-in agent's name.
const GeneralPurposeName = "general-purpose"

// GeneralPurpose returns the built-in general-purpose agent (DESIGN.md
// S-D4). It mirrors the main agent: every available tool (Tools is nil;
// the subagent layer removes Agent, as it is a leaf), the main agent's
// model, hooks and execution settings, and the main workspace (shared).
// Its description and prompt live in general-purpose.md, written in the
// Claude Code format and read by the same parser as users' files.
func GeneralPurpose() Definition {
	d, problems, _ := parseFile("general-purpose.md", []byte(generalPurposeFile), FormatClaude, SourceBuiltin, "")
	if len(problems) > 0 || len(d.Warnings) > 0 {
		// The file is compiled in and covered by tests.
		panic(fmt.Sprintf("agent: built-in general-purpose.md does not load: %v %v", problems, d.Warnings))
	}
	d.Format, d.Path, d.Line = FormatBuiltin, "", 0
	d.Workspace = &Workspace{Mode: WorkspaceShared}
	return d
}
