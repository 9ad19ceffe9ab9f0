package cli

import (
	"fmt"
	"io"

	"github.com/cadre-dev/cadre"
	"github.com/spf13/cobra"
)

func sandboxCmd(stdout io.Writer) *cobra.Command {
	root := &cobra.Command{Use: "sandbox", Short: "the sandbox commands run in: 'sandbox status' shows what this machine enforces"}
	var cwd string
	status := &cobra.Command{
		Use:   "status",
		Short: "show what this machine's sandbox supports and what it enforces here (mode, writable and hidden paths, network)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			debug, _ := cmd.Flags().GetBool("debug")
			rt, err := cadre.New(cmd.Context(), cadre.Options{Cwd: cwd, Logger: newLogger(cmd.ErrOrStderr(), debug)})
			if err != nil {
				return err
			}
			defer rt.Close()
			_, err = fmt.Fprint(stdout, rt.SandboxReport())
			return err
		},
	}
	status.Flags().StringVar(&cwd, "cwd", "", "project directory (default: the current one)")
	root.AddCommand(status)
	return root
}
