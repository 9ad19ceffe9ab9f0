// Command cadre is the cadre agent runtime's command line: headless runs
// (cadre -p), sessions and, later, the interactive TUI. All behaviour lives
// in internal/cli; this file only hands it the process.
package main

import (
	"os"
	"strconv"
	"time"

	"github.com/cadre-dev/cadre/internal/cli"
)

func main() {
	// CADRE_START_TRACE=1 prints the wall clock at main's first line, so
	// that a benchmark which noted the time before exec knows how long the
	// runtime and package initialisation took (bench BenchmarkTimeToMain,
	// docs/performance.md). It is read here, before anything else runs.
	if os.Getenv("CADRE_START_TRACE") != "" {
		os.Stderr.WriteString("cadre: start: main " + strconv.FormatInt(time.Now().UnixNano(), 10) + "\n")
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
