// Package cli is the cadre command line: flags become cadre.Options, a
// prompt becomes a Run, and the run's events go to an output writer. It holds
// no runtime logic of its own.
package cli
