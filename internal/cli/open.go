package cli

import (
	"github.com/cadre-dev/cadre"
	"github.com/spf13/cobra"
)

// withRuntime opens a runtime for cwd (empty for the process's own
// directory), runs fn with it and closes it, so a command's body is only
// what it does with the runtime.
func withRuntime(cmd *cobra.Command, cwd string, fn func(rt *cadre.Runtime) error) error {
	debug, _ := cmd.Flags().GetBool("debug")
	rt, err := cadre.New(cmd.Context(), cadre.Options{Cwd: cwd, Logger: newLogger(cmd.ErrOrStderr(), debug)})
	if err != nil {
		return err
	}
	defer rt.Close()
	return fn(rt)
}
