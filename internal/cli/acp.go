package cli

import (
	"io"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/acp"
	"github.com/spf13/cobra"
)

// acpCmd is `cadre acp`: cadre as an ACP agent for editors, on stdin and
// stdout. Standard output carries the protocol only; warnings go to
// standard error, which editors keep in their logs.
func acpCmd(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	var model, mode string
	var trusted bool
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "serve the Agent Client Protocol on stdin/stdout (Zed, JetBrains, Neovim; see docs/acp.md)",
		Long: `cadre acp speaks the Agent Client Protocol (ACP) on standard input and output,
for editors that run agents: each editor session is a cadre session in the
folder the editor names, its subagents shown as tool calls with their progress,
tool permissions asked in the editor. Standard output carries only the
protocol; warnings go to standard error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			debug, _ := cmd.Flags().GetBool("debug")
			log := newLogger(stderr, debug)
			tp, flush := openTracing(cmd.Context(), log)
			defer flush() // after the runtimes close
			rts := acp.NewRuntimes(cadre.Options{Model: model, PermissionMode: cadre.PermissionMode(mode), Logger: log, TracerProvider: tp, TrustWorkspace: trusted})
			defer rts.Close()
			return acp.Serve(cmd.Context(), acp.Config{Backend: rts, In: stdin, Out: stdout, Logger: log})
		},
	}
	cmd.Flags().StringVar(&model, "model", "", "model of every session (default: the settings')")
	cmd.Flags().BoolVar(&trusted, "trust-workspace", false, "trust every session's project files without asking (automation; see cadre trust)")
	cmd.Flags().StringVar(&mode, "permission-mode", "", "permission mode of every session: plan, default, acceptEdits or bypassPermissions")
	return cmd
}
