// Command cadre-sandbox is cadre's sandbox launcher: cadre starts it to
// run a command inside the walls (internal/sandbox), installed beside the
// cadre binary. It is the same launcher the cadre binary carries, in a
// program that links little else, so that a sandboxed command starts
// about as fast as an unsandboxed one. People do not run it.
package main

import (
	"fmt"
	"os"

	// Its init is the launcher: it sets the walls up and executes the
	// command before main runs.
	_ "github.com/cadre-dev/cadre/internal/sandbox"
)

func main() {
	fmt.Fprintln(os.Stderr, "cadre-sandbox: this is cadre's sandbox launcher; cadre starts it (see `cadre sandbox status`). Install it beside cadre, from the same release.")
	os.Exit(2)
}
