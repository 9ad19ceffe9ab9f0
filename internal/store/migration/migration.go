package migration

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strconv"
	"sync"
)

// Step is one schema step, from migrations/NNNN_name.sql.
type Step struct {
	Version int
	Name    string
	SQL     string
}

// fileName is compiled on first use, not when every cadre command starts
// (bench/initcost_test.go).
var fileName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)
})

// Load reads the migrations in fsys's migrations/ folder, in version
// order, and checks that they are numbered 1, 2, 3... without gaps or
// repeats.
func Load(fsys fs.FS) ([]Step, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var ms []Step
	for _, name := range names {
		base := path.Base(name)
		m := fileName().FindStringSubmatch(base)
		if m == nil {
			return nil, fmt.Errorf("migration %s: name must look like 0001_some_name.sql", base)
		}
		text, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("migration %s: %w", base, err)
		}
		v, _ := strconv.Atoi(m[1])
		ms = append(ms, Step{Version: v, Name: m[2], SQL: string(text)})
	}
	slices.SortFunc(ms, func(a, b Step) int { return a.Version - b.Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %04d_%s: expected version %d (versions must run 1, 2, 3... without gaps or repeats)", m.Version, m.Name, i+1)
		}
	}
	return ms, nil
}
