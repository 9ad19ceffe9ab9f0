// Command cadre is the cadre agent runtime's command line: headless runs
// (cadre -p), sessions and, later, the interactive TUI. All behaviour lives
// in internal/cli; this file only hands it the process.
package main

import (
	"os"

	"github.com/cadre-dev/cadre/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
