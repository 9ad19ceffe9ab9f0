package migration

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestLoad(t *testing.T) {
	file := func(names ...string) fstest.MapFS {
		fs := fstest.MapFS{}
		for _, n := range names {
			fs["migrations/"+n] = &fstest.MapFile{Data: []byte("SELECT 1; -- " + n)}
		}
		return fs
	}
	tests := []struct {
		name    string
		fs      fstest.MapFS
		want    []Step
		wantErr string
	}{
		{"in order", file("0002_b.sql", "0001_a.sql", "0003_c.sql"), []Step{
			{1, "a", "SELECT 1; -- 0001_a.sql"}, {2, "b", "SELECT 1; -- 0002_b.sql"}, {3, "c", "SELECT 1; -- 0003_c.sql"},
		}, ""},
		{"none", file(), nil, ""},
		{"other files ignored", fstest.MapFS{"migrations/0001_a.sql": {Data: []byte("x")}, "migrations/README": {}, "0002_b.sql": {}}, []Step{{1, "a", "x"}}, ""},
		{"gap", file("0001_a.sql", "0003_c.sql"), nil, "0003_c: expected version 2"},
		{"repeat", file("0001_a.sql", "0001_b.sql"), nil, "expected version 2"},
		{"not starting at 1", file("0002_a.sql"), nil, "expected version 1"},
		{"bad name", file("0001_a.sql", "2_tasks.sql"), nil, "2_tasks.sql: name must look like"},
		{"capitals", file("0001_Tasks.sql"), nil, "0001_Tasks.sql: name must look like"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := Load(tt.fs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ms); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
}
