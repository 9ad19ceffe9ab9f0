#!/usr/bin/env bash
# run.sh runs cadre's overhead benchmarks (see bench/README.md) and prints
# the figures: the binary's (bench/), the loop's (internal/loop) and the
# subagent runtime's in-process ones (the root package, through the SDK).
# Extra arguments go to `go test` (e.g. -count 5, -cpu 1).
# BENCHTIME overrides the iterations per benchmark (default 20x);
# BG_BENCHTIME those of the 1,000-background-agent ones, the cluster one
# (PostgreSQL, two nodes), the team one (8 teammates, 200 tasks) and the
# TUI's idle one (default 1x: one iteration takes seconds).
set -euo pipefail
cd "$(dirname "$0")/.."

raw=$(mktemp)
trap 'rm -f "$raw"' EXIT

go test -run XXX -bench . -skip 'Background1000|BackgroundPostgres|TUIIdle|Cluster|TeamBinary' -benchtime "${BENCHTIME:-20x}" "$@" ./bench/ ./internal/loop/ . | tee "$raw"
go test -run XXX -bench 'Background1000|BackgroundPostgres|TUIIdle|Cluster|TeamBinary' -benchtime "${BG_BENCHTIME:-1x}" "$@" ./bench/ . | tee -a "$raw"

echo
echo "== cadre overhead (zero-latency fake model) =="
awk '
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	line = sprintf("%-38s", name)
	for (i = 3; i < NF; i += 2) {
		v = $i; u = $(i+1)
		if (u == "ns/op" && v >= 1e9)      { v = sprintf("%.2f", v/1e9); u = "s/op" }
		else if (u == "ns/op" && v >= 1e6) { v = sprintf("%.2f", v/1e6); u = "ms/op" }
		else if (u == "ns/op" && v >= 1e3) { v = sprintf("%.1f", v/1e3); u = "µs/op" }
		else if (u == "ns/turn" && v >= 1e3) { v = sprintf("%.1f", v/1e3); u = "µs/turn" }
		else if (u ~ /^(p[0-9]+-)?ns\/spawn$/ && v >= 1e6) { v = sprintf("%.2f", v/1e6); sub(/ns/, "ms", u) }
		else if (u ~ /^(p[0-9]+-)?ns\/spawn$/ && v >= 1e3) { v = sprintf("%.1f", v/1e3); sub(/ns/, "µs", u) }
		else if (u ~ /^(live-)?B\/(op|child)$/ && v >= 1048576) { v = sprintf("%.2f", v/1048576); sub(/B/, "MiB", u) }
		else if (u ~ /^(live-)?B\/(op|child)$/ && v >= 1024)    { v = sprintf("%.1f", v/1024); sub(/B/, "KiB", u) }
		else if (u ~ /-µs$/ && v >= 1e3)   { v = sprintf("%.1f", v/1e3); sub(/-µs$/, "-ms", u) }
		else if (u == "peak-RSS-KB")       { v = sprintf("%.1f", v/1024); u = "MiB peak RSS" }
		else if (u == "peak-RssAnon-KB")   { v = sprintf("%.1f", v/1024); u = "MiB peak RssAnon" }
		else if (u == "peak-heap-KB")      { v = sprintf("%.1f", v/1024); u = "MiB peak heap" }
		line = line sprintf("  %s %s", v, u)
	}
	print line
}' "$raw"
