package replay

import (
	"fmt"
	"strings"
)

// Kinds of divergence.
const (
	// KindToolResult: a re-run tool call returned something else.
	KindToolResult = "tool_result"
	// KindChild: a subagent was started that the recording does not have,
	// with another agent type or prompt, or a recorded one was not started.
	KindChild = "child"
	// KindTurn: the replay asked for a model turn the recording does not
	// have (the run went on where the recorded one had ended).
	KindTurn = "turn"
	// KindFile: a file the recorded run wrote is not changed by the replay.
	KindFile = "file"
)

// Divergence is one place where the replay differs from the recording.
type Divergence struct {
	Kind string
	// Agent is the agent type, AgentID its recorded session id.
	Agent, AgentID string
	// Turn is the agent's model turn (from 1) whose tool call diverged, or
	// the turn asked for.
	Turn      int
	ToolUseID string
	Tool      string
	// Recorded and Replayed are the normalised texts compared; Diff a
	// short line diff of them.
	Recorded, Replayed string
	Diff               string
	// Detail says what differs in words.
	Detail string
}

// String is the divergence in one line, without its diff.
func (d Divergence) String() string {
	return Describe(d.Kind, d.Agent, d.AgentID, d.Turn, d.Tool, d.ToolUseID, "", d.Detail)
}

// Describe is a divergence in one line, as the report and the SDK's
// ReplayDivergence print it.
func Describe(kind, agent, agentID string, turn int, tool, toolUseID, path, detail string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: agent %s", kind, agent)
	if agentID != "" {
		fmt.Fprintf(&b, " (%s)", agentID)
	}
	if turn > 0 {
		fmt.Fprintf(&b, ", turn %d", turn)
	}
	if toolUseID != "" {
		fmt.Fprintf(&b, ", tool %s (call %s)", tool, toolUseID)
	}
	if path != "" {
		fmt.Fprintf(&b, ", file %s", path)
	}
	if detail != "" {
		b.WriteString(": " + detail)
	}
	return b.String()
}

// maxDiffLines bounds each side of a diff: it locates a divergence, it
// does not reproduce whole files.
const maxDiffLines = 12

// Diff is a short line diff of recorded (-) and replayed (+): the lines
// between their common start and end, with one line of context each side,
// each side cut at maxDiffLines.
func Diff(recorded, replayed string) string {
	if recorded == replayed {
		return ""
	}
	a, b := strings.Split(recorded, "\n"), strings.Split(replayed, "\n")
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out strings.Builder
	fmt.Fprintf(&out, "@@ line %d @@\n", pre+1)
	if pre > 0 {
		out.WriteString("  " + a[pre-1] + "\n")
	}
	side := func(sign string, lines []string) {
		for i, l := range lines {
			if i == maxDiffLines {
				fmt.Fprintf(&out, "%s… (%d more lines)\n", sign, len(lines)-i)
				break
			}
			out.WriteString(sign + l + "\n")
		}
	}
	side("-", a[pre:len(a)-suf])
	side("+", b[pre:len(b)-suf])
	if suf > 0 {
		out.WriteString("  " + a[len(a)-suf] + "\n")
	}
	return strings.TrimSuffix(out.String(), "\n")
}
