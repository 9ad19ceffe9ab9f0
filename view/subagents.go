package view

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/record"
)

// SubagentRun is one subagent run of a conversation's tree, at any depth.
type SubagentRun struct {
	// Index is the run's number in the conversation ("#" in /subagents):
	// 1 for the first subagent started, in start order, so it never
	// changes while the conversation lasts.
	Index           int
	ID              string // agent id = task id = session id
	Key             string // "agent:<type>:subagent:<id>"
	ParentSessionID string
	ToolUseID       string // the call that started it ("" for a run of an earlier process)
	Agent           string // its type
	Name            string // its SendMessage name, if any
	Description     string
	Depth           int // 1 for the main agent's children
	Background      bool
	Status          record.TaskStatus
	Started, Ended  time.Time // Ended is zero while it runs
	Tokens          int64
	ToolUses        int
	CurrentTool     string // the tool it called last, while it runs
	Result, Error   string
}

// Running reports whether the run is still going.
func (s SubagentRun) Running() bool { return !s.Status.Terminal() }

// SubagentDetails is /subagents info: the run, its session and its
// cleanup setting.
type SubagentDetails struct {
	SubagentRun
	Prompt         string
	SessionID      string
	TranscriptPath string
	Created        time.Time
	CostUSD        llm.Cost
	// Cleanup is what becomes of the session after a background run:
	// "keep" (archived after ArchiveAfterMinutes) or "delete" (archived
	// right after its notification).
	Cleanup             string
	ArchiveAfterMinutes int
	OutputFile          string
}

// LogMessage is one message of a subagent's log.
type LogMessage struct {
	Role string // "user" or "assistant"
	Time time.Time
	// Text is the message's text; with tool calls asked for, each call
	// ("→ Tool input") and result ("← text") is a line of it too.
	Text string
}

// Log limits, as OpenClaw's /subagents log has them.
const (
	DefaultLogLimit = 20
	MaxLogLimit     = 200
)

// FindRun resolves a /subagents target among runs as OpenClaw does: "#N"
// or N (the run's Index), "last" (the newest), a session key, a name, an
// id, or a unique prefix of an id.
func FindRun(runs []SubagentRun, target string) (SubagentRun, error) {
	target = strings.TrimSpace(target)
	if target == "" {
		return SubagentRun{}, errors.New("name a subagent: #N, last, its id or its name (/subagents list shows them)")
	}
	if len(runs) == 0 {
		return SubagentRun{}, errors.New("this conversation has started no subagent yet")
	}
	if target == "last" {
		// The newest is the last launched, as the numbers count: two
		// runs launched together can stamp their start times in the
		// other order.
		newest := runs[0]
		for _, r := range runs[1:] {
			if r.Index > newest.Index {
				newest = r
			}
		}
		return newest, nil
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(target, "#")); err == nil {
		if n < 1 || n > len(runs) {
			return SubagentRun{}, fmt.Errorf("no subagent #%d: this conversation has %d (#1–#%d)", n, len(runs), len(runs))
		}
		return runs[n-1], nil
	}
	for _, r := range runs {
		if r.ID == target || r.Key == target {
			return r, nil
		}
	}
	for i := len(runs) - 1; i >= 0; i-- { // a reused name means the newest run
		if r := runs[i]; r.Name != "" && strings.EqualFold(r.Name, target) {
			return r, nil
		}
	}
	var found []SubagentRun
	for _, r := range runs {
		if strings.HasPrefix(r.ID, target) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return SubagentRun{}, fmt.Errorf("no subagent %q in this conversation (/subagents list shows them)", target)
	}
	return SubagentRun{}, fmt.Errorf("%q is the start of %d subagent ids: give more of it, or its #", target, len(found))
}

// LogText is a message as a log shows it: its text, and with tools its
// calls and results, one line each (results clipped).
func LogText(m llm.Message, tools bool) string {
	var lines []string
	for _, b := range m.Content {
		switch b.Type {
		case llm.BlockText:
			if t := strings.TrimSpace(b.Text); t != "" {
				lines = append(lines, t)
			}
		case llm.BlockToolUse:
			if tools {
				lines = append(lines, "→ "+b.Name+" "+clipLine(string(b.Input), 200))
			}
		case llm.BlockToolResult:
			if tools {
				mark := "← "
				if b.IsError {
					mark = "← error: "
				}
				lines = append(lines, mark+clipLine(b.ResultText(), 200))
			}
		}
	}
	return strings.Join(lines, "\n")
}

// clipLine is s on one line, at most n runes.
func clipLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
