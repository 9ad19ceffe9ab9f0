//go:build unix

package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/testkit/pgtest"
)

// pg is a throwaway PostgreSQL server for the benchmarks on a PostgreSQL
// store, started by the first that asks for a database; TestMain stops it.
var pg pgtest.Server

// BenchmarkBackgroundPostgresBinary is BenchmarkBackground1000Binary/lane=64
// with CADRE_STORE_URL pointing at a fresh database on the test server
// (PostgreSQL on the same machine, fsync off): one `cadre -p` as a user
// runs it, one node, background runs in its own process (store.dispatch
// sticky), records and transcripts in PostgreSQL. children=1000 always
// runs; children=10000 only with CADRE_BENCH_PG_10000=1 (a minute or
// more). Like the SQLite run it fails on a compaction warning. ns/op is the
// wall time, exit included; peak-RSS-KB the process's; server-CPU-ms/op
// the processor time of the server's processes over the run (the
// backends' share of a machine the run saturates, less noisy than the
// wall time when others share it).
func BenchmarkBackgroundPostgresBinary(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			if n > 1000 && os.Getenv("CADRE_BENCH_PG_10000") == "" {
				b.Skip("set CADRE_BENCH_PG_10000=1 to run 10,000 children on PostgreSQL")
			}
			p := newProject(b)
			scenario := filepath.Join(p.dir, "background.yaml")
			if err := os.WriteFile(scenario, []byte(backgroundScenario(n)), 0o644); err != nil {
				b.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(p.dir, ".cadre"), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p.dir, ".cadre", "settings.json"), []byte(`{"subagents": {"maxConcurrent": 64}}`), 0o644); err != nil {
				b.Fatal(err)
			}
			base := p.vars
			var server time.Duration
			loop(b, func() int64 {
				b.StopTimer()
				p.vars = append(slices.Clone(base), "CADRE_STORE_URL="+pg.URL(b)) // a fresh database each run
				before, err := pg.CPU()
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				rss, _ := p.runBackground(b, n, "-p", "Split the job between background agents.",
					"--output-format", "stream-json", "--model", "script:"+scenario, "--trust-workspace")
				b.StopTimer()
				after, err := pg.CPU()
				if err != nil {
					b.Fatal(err)
				}
				server += after - before
				b.StartTimer()
				return rss
			})
			b.ReportMetric(float64(server.Milliseconds())/float64(b.N), "server-CPU-ms/op")
		})
	}
}
