package postgres

import (
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/store/tablerow"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

// TestUpdateSetsChangedColumns: an update sets the columns that changed
// and no other, numbered in the order of its parameters; one that changes
// nothing still writes the row, to learn its version.
func TestUpdateSetsChangedColumns(t *testing.T) {
	before := tasktest.Sample("t1")
	before.Status, before.Started, before.Owner = task.StatusPending, time.Time{}, ""
	after := before
	after.Status, after.Started, after.Owner = task.StatusRunning, time.UnixMilli(1_700_000_000_000), "node-1"
	xmin := uint32(7)
	for _, tt := range []struct {
		name        string
		after       task.Task
		xmin        *uint32
		wantSQL     string
		wantNParams int
	}{
		{"start, remembered", after, &xmin,
			`UPDATE tasks SET status = $1, owner = $2, started_ms = $3 WHERE id = $4 AND xmin = $5 RETURNING xmin`, 5},
		{"start, read", after, nil,
			`UPDATE tasks SET status = $1, owner = $2, started_ms = $3 WHERE id = $4 RETURNING xmin`, 4},
		{"nothing changed", before, &xmin,
			`UPDATE tasks SET kind = $1 WHERE id = $2 AND xmin = $3 RETURNING xmin`, 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, p := updateSQL("tasks", tablerow.TaskColumnNames, tablerow.TaskValues(before), tablerow.TaskValues(tt.after), "t1", tt.xmin)
			if q != tt.wantSQL {
				t.Errorf("sql\n got %s\nwant %s", q, tt.wantSQL)
			}
			if len(p) != tt.wantNParams {
				t.Errorf("%d parameters %v, want %d", len(p), p, tt.wantNParams)
			}
		})
	}
}
