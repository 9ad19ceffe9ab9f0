// Package bench holds benchmarks of cadre's own overhead against
// zero-latency fake providers: how long the real binary takes to start, to
// run a one-turn and a two-turn (tool-calling) session end to end, and how
// much memory such a run peaks at. The model answers instantly
// (internal/testkit), so every figure is cadre's cost, not a model's.
//
// Run them with bench/run.sh; see bench/README.md for what each figure
// means.
package bench
