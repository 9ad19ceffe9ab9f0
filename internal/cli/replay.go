package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/cadre-dev/cadre"
	"github.com/spf13/cobra"
)

// exitDiverged is `cadre replay --check`'s exit status when the replay
// diverged from the recording (docs/replay.md); 1 stays "could not run".
const exitDiverged = 3

func replayCmd(stdout io.Writer) *cobra.Command {
	var (
		o             cadre.ReplayOptions
		tools         string
		check, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "replay SESSION",
		Short: "run a recorded session again offline and report where it diverges",
		Long: `replay runs a recorded session again without calling a provider: the recorded
model turns are fed back, agent by agent, while the tools run again for real in
a scratch git worktree of the workspace (its uncommitted changes included), and
each tool result, each subagent started and the files written are compared with
the recording. It stops at the first divergence unless --model names a live
model to go on with from there.

Exit status: 0 when the replay ran (with --check: and did not diverge), 3 with
--check when it diverged, 1 when it could not run. See docs/replay.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			debug, _ := cmd.Flags().GetBool("debug")
			o.Session = args[0]
			o.Tools = cadre.ReplayTools(tools)
			o.Options.Logger = newLogger(cmd.ErrOrStderr(), debug)
			rep, err := cadre.Replay(cmd.Context(), o)
			if err != nil {
				return err
			}
			if asJSON {
				err = writeJSON(stdout, rep)
			} else {
				err = writeReplay(stdout, rep)
			}
			if err != nil {
				return err
			}
			if check && rep.Diverged {
				return exitError{code: exitDiverged}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Agent, "agent", "", "replay only this subagent run of the session (its agent id), with its own prompt")
	fl.IntVar(&o.FromTurn, "from-turn", 0, "hand the replayed agent to --model from this turn on (counting from 1)")
	fl.StringVar(&o.Model, "model", "", "a live model that answers from the first divergence (or --from-turn) on")
	fl.BoolVar(&check, "check", false, fmt.Sprintf("exit with status %d when the replay diverges", exitDiverged))
	fl.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fl.StringVar(&tools, "tools", string(cadre.ReplayToolsAll), `which tools run again: "all", or "read-only" (the others answer with their recorded results)`)
	fl.BoolVar(&o.InPlace, "in-place", false, "run the tools in the workspace itself, not in a scratch worktree")
	fl.StringVar(&o.Workspace, "workspace", "", "the directory the recorded run worked in, if it moved (default: the recorded one)")
	fl.StringVar(&o.Options.Cwd, "cwd", "", "the directory whose settings name the session store to read (default: the current one)")
	return cmd
}

// writeReplay prints the report for a person: what ran, then the first
// divergence with its diff, then the count of the others.
func writeReplay(w io.Writer, rep cadre.ReplayReport) error {
	var b strings.Builder
	what := "session " + rep.Session
	if rep.Agent != "" {
		what = fmt.Sprintf("subagent run %s (%s) of session %s", rep.Agent, rep.AgentType, rep.Session)
	}
	where := "in scratch worktree " + rep.Scratch
	if rep.Scratch == "" {
		where = "in place in " + rep.Workspace
	}
	fmt.Fprintf(&b, "replayed %s %s\n", what, where)
	fmt.Fprintf(&b, "  turns: %d from the recording, %d live", rep.TurnsReplayed, rep.TurnsLive)
	if rep.Model != "" {
		fmt.Fprintf(&b, " (%s)", rep.Model)
	}
	fmt.Fprintf(&b, "; tools: %s; replay session %s\n", rep.Tools, rep.ReplaySession)
	if rep.Scratch != "" {
		files := "none"
		if len(rep.FilesChanged) > 0 {
			files = strings.Join(rep.FilesChanged, ", ")
		}
		fmt.Fprintf(&b, "  files changed: %s\n", files)
	}
	if !rep.Diverged {
		b.WriteString("no divergence\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	first := rep.Divergences[0]
	verb := "diverged"
	if rep.Stopped {
		verb = "diverged (stopped there)"
	}
	fmt.Fprintf(&b, "%s at %s\n", verb, first)
	if first.Diff != "" {
		for _, l := range strings.Split(first.Diff, "\n") {
			b.WriteString("    " + l + "\n")
		}
	}
	switch n := len(rep.Divergences) - 1; {
	case n == 1:
		b.WriteString("and 1 more divergence after it (--json lists it)\n")
	case n > 1:
		fmt.Fprintf(&b, "and %d more divergences after it (--json lists them)\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
