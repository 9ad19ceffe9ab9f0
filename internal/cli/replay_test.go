package cli

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/testkit/golden"
)

// The replay report's two forms are what scripts and people read: both
// are pinned, for a faithful replay and for a diverged one.
func TestReplayReportGolden(t *testing.T) {
	ok := cadre.ReplayReport{
		Session: "01a2244c-5527-763d-9793-5efa561c39af", AgentType: "main", ReplaySession: "01a2245b-0e2f-7000-8000-000000000001",
		Workspace: "/src/shop", Scratch: "/src/shop/.git/cadre-worktrees/replay-01a2245b-0e2e-7000-8000-000000000001",
		Tools: cadre.ReplayToolsAll, TurnsReplayed: 6, Divergences: []cadre.ReplayDivergence{}, FilesChanged: []string{},
		Result: "Both agents are done.",
	}
	diverged := ok
	diverged.Agent, diverged.AgentType, diverged.Scratch = "01a2244c-5538-7360-8f76-81719118882a", "reviewer", ""
	diverged.Tools, diverged.Model, diverged.TurnsReplayed, diverged.TurnsLive = cadre.ReplayToolsReadOnly, "opus", 1, 2
	diverged.Diverged = true
	diverged.Divergences = []cadre.ReplayDivergence{{
		Kind: cadre.DivergedToolResult, Agent: "reviewer", AgentID: "01a2244c-5538-7360-8f76-81719118882a", Turn: 1,
		ToolUseID: "toolu_009b4abab0bbdbe04419e8f3", Tool: "Grep", Detail: "the result differs",
		Recorded: "stock.go:14: // TODO: reject", Replayed: "stock.go:14: // TODO: refuse",
		Diff: "@@ line 1 @@\n-stock.go:14: // TODO: reject\n+stock.go:14: // TODO: refuse",
	}, {
		Kind: cadre.DivergedTurn, Agent: "main", Turn: 3, Detail: "the replayed run ended after turn 2; the recorded one went on to turn 3",
	}}
	diverged.Result = "LIVE"
	for _, c := range []struct {
		name string
		rep  cadre.ReplayReport
	}{{"replay-ok", ok}, {"replay-diverged", diverged}} {
		t.Run(c.name, func(t *testing.T) {
			var text, js bytes.Buffer
			if err := writeReplay(&text, c.rep); err != nil {
				t.Fatal(err)
			}
			if err := writeJSON(&js, c.rep); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", c.name+".txt.golden"), text.Bytes())
			golden.Check(t, filepath.Join("testdata", c.name+".json.golden"), js.Bytes())
		})
	}
}
