package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/internal/session"
	"github.com/cadre-dev/cadre/internal/store/tablerow"
	"github.com/cadre-dev/cadre/internal/task"
	"github.com/cadre-dev/cadre/internal/task/tasktest"
)

// watchSetColumns makes db's writer connection record the columns that
// each UPDATE of the sessions and tasks tables names in its SET list — a
// trigger "AFTER UPDATE OF col" fires when col is set, to whatever value,
// which is also what makes SQLite rewrite the indexes holding col. The
// triggers are TEMP: the connection's own, not the file's. It returns a
// function that takes the columns recorded so far ("table.column"),
// sorted. Call it before the first update: statements prepared earlier
// would not see the triggers.
func watchSetColumns(t *testing.T, db *DB) (take func() []string) {
	t.Helper()
	ctx := t.Context()
	err := db.write(ctx, func(tx *wtx) error {
		if _, err := tx.tx.ExecContext(ctx, `CREATE TEMP TABLE set_columns (col TEXT NOT NULL)`); err != nil {
			return err
		}
		for table, cols := range map[string][]string{"tasks": taskColumns, "sessions": sessionColumns} {
			for _, col := range cols {
				q := fmt.Sprintf(`CREATE TEMP TRIGGER set_%[1]s_%[2]s AFTER UPDATE OF %[2]s ON main.%[1]s
					BEGIN INSERT INTO set_columns VALUES ('%[1]s.%[2]s'); END`, table, col)
				if _, err := tx.tx.ExecContext(ctx, q); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("install the triggers: %v", err)
	}
	return func() []string {
		t.Helper()
		got := []string{}
		err := db.write(ctx, func(tx *wtx) error {
			rows, err := tx.tx.QueryContext(ctx, `SELECT col FROM set_columns`)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var c string
				if err := rows.Scan(&c); err != nil {
					return err
				}
				got = append(got, c)
			}
			if err := rows.Err(); err != nil {
				return err
			}
			_, err = tx.tx.ExecContext(ctx, `DELETE FROM set_columns`)
			return err
		})
		if err != nil {
			t.Fatalf("read the columns set: %v", err)
		}
		slices.Sort(got)
		return got
	}
}

// An update sets only the columns whose values it changed, so that the
// indexes on the others are left alone; one that changes nothing sets
// none. Values are compared as stored: a time moved within its millisecond
// is unchanged.
func TestUpdateSetsOnlyChangedColumns(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	ctx := t.Context()
	taken := watchSetColumns(t, db)
	sample := tasktest.Sample("t1")
	if err := db.CreateSessionTask(ctx, info("t1"), sample); err != nil {
		t.Fatal(err)
	}
	end := time.UnixMilli(1_780_000_009_000).UTC()

	for _, c := range []struct {
		name string
		sfn  func(*session.Info) error // nil: UpdateTask alone
		tfn  func(*task.Task) error
		ev   task.Event // not "": Transition, with this event after tfn
		want []string
	}{
		{"nothing", nil, func(*task.Task) error { return nil }, "", []string{}},
		{"the same values", nil, func(tk *task.Task) error {
			tk.Status, tk.Progress, tk.Owner = sample.Status, sample.Progress, sample.Owner
			return nil
		}, "", []string{}},
		{"a time moved within its millisecond", nil, func(tk *task.Task) error {
			tk.Created = tk.Created.Add(300 * time.Microsecond)
			return nil
		}, "", []string{}},
		{"progress", nil, func(tk *task.Task) error { tk.Progress = "writing the report"; return nil },
			"", []string{"tasks.progress"}},
		{"a time cleared", nil, func(tk *task.Task) error { tk.Heartbeat = time.Time{}; return nil },
			"", []string{"tasks.heartbeat_ms"}},
		{"a task's end", nil, func(tk *task.Task) error {
			tk.Result, tk.Finished = "done", end
			return nil
		}, task.EventComplete, []string{"tasks.finished_ms", "tasks.result", "tasks.status"}},
		{"a session and a task unchanged", func(*session.Info) error { return nil },
			func(*task.Task) error { return nil }, "", []string{}},
		{"a session's end, the task unchanged", func(s *session.Info) error {
			s.Status, s.Updated, s.NumTurns = session.StatusCompleted, end, s.NumTurns+1
			return nil
		}, func(*task.Task) error { return nil },
			"", []string{"sessions.num_turns", "sessions.status", "sessions.updated_ms"}},
		{"both changed", func(s *session.Info) error { s.Title = "renamed"; return nil },
			func(tk *task.Task) error { tk.Notified = true; return nil },
			"", []string{"sessions.title", "tasks.notified"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			wantTask, err := db.GetTask(ctx, "t1")
			if err != nil {
				t.Fatal(err)
			}
			wantSession, err := db.GetSession(ctx, "t1")
			if err != nil {
				t.Fatal(err)
			}
			c.tfn(&wantTask)
			if c.ev != "" {
				if wantTask, err = task.Apply(wantTask, c.ev); err != nil {
					t.Fatal(err)
				}
			}
			var got task.Task
			switch {
			case c.ev != "":
				got, err = db.Transition(ctx, "t1", func(tk *task.Task) (task.Event, error) { return c.ev, c.tfn(tk) })
			case c.sfn == nil:
				got, err = db.UpdateTask(ctx, "t1", c.tfn)
			default:
				c.sfn(&wantSession)
				got, err = db.UpdateSessionTask(ctx, "t1", c.sfn, "t1", c.tfn)
			}
			if err != nil {
				t.Fatal(err)
			}
			if set := taken(); !slices.Equal(set, c.want) {
				t.Errorf("columns set: %q, want %q", set, c.want)
			}
			wantTask = tablerow.NormalizeTask(wantTask)
			if diff := cmp.Diff(wantTask, got, timeEqual); diff != "" {
				t.Errorf("the update returned (-want +got):\n%s", diff)
			}
			if stored, err := db.GetTask(ctx, "t1"); err != nil || !cmp.Equal(wantTask, stored, timeEqual) {
				t.Errorf("task stored: %v, %v; want %+v", stored, err, wantTask)
			}
			if stored, err := db.GetSession(ctx, "t1"); err != nil || !cmp.Equal(wantSession, stored, timeEqual) {
				t.Errorf("session stored: %+v, %v; want %+v", stored, err, wantSession)
			}
		})
	}

	// UpdateSession alone, likewise.
	if err := db.UpdateSession(ctx, "t1", func(*session.Info) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if set := taken(); len(set) != 0 {
		t.Errorf("UpdateSession changing nothing set %q", set)
	}
	if err := db.UpdateSession(ctx, "t1", func(s *session.Info) error { s.Owner = "me"; return nil }); err != nil {
		t.Fatal(err)
	}
	if set := taken(); !slices.Equal(set, []string{"sessions.owner"}) {
		t.Errorf("UpdateSession of the owner set %q", set)
	}
}

// An update that changes nothing changes no row, and its commit writes no
// page to the WAL.
func TestUpdateChangingNothingWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cadre.db")
	db := open(t, path)
	ctx := t.Context()
	if err := db.CreateSessionTask(ctx, info("t1"), tasktest.Sample("t1")); err != nil {
		t.Fatal(err)
	}
	totalChanges := func() int64 {
		t.Helper()
		var n int64
		if err := db.write(ctx, func(tx *wtx) error {
			return tx.tx.QueryRowContext(ctx, `SELECT total_changes()`).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	walSize := func() int64 {
		t.Helper()
		fi, err := os.Stat(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}

	changes, wal := totalChanges(), walSize()
	if _, err := db.UpdateTask(ctx, "t1", func(tk *task.Task) error { tk.Progress = tk.Progress + ""; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateSession(ctx, "t1", func(*session.Info) error { return nil }); err != nil {
		t.Fatal(err)
	}
	noop := func(*session.Info) error { return nil }
	if _, err := db.UpdateSessionTask(ctx, "t1", noop, "t1", func(*task.Task) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if got := totalChanges() - changes; got != 0 {
		t.Errorf("updates changing nothing changed %d rows", got)
	}
	if got := walSize(); got != wal {
		t.Errorf("updates changing nothing grew the WAL from %d to %d bytes", wal, got)
	}

	// The check itself: an update that changes a column is seen by both.
	if _, err := db.UpdateTask(ctx, "t1", func(tk *task.Task) error { tk.Progress = "new"; return nil }); err != nil {
		t.Fatal(err)
	}
	if got := totalChanges() - changes; got != 1 {
		t.Errorf("an update of one row changed %d rows", got)
	}
	if got := walSize(); got <= wal {
		t.Errorf("an update left the WAL at %d bytes", got)
	}
}

// Updates of different columns of one row, queued together, share a
// transaction: each keeps the others' changes, and a failing one is
// undone alone.
func TestUpdatesOfDifferentColumnsInOneCommit(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "cadre.db"))
	ctx := context.Background()
	sample := tasktest.Sample("t1")
	if err := db.CreateSessionTask(ctx, info("t1"), sample); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	updates := []struct {
		tfn     func(*task.Task) error
		sfn     func(*session.Info) error
		wantErr error
	}{
		{tfn: func(tk *task.Task) error { tk.Progress = "p"; return nil }},
		{tfn: func(tk *task.Task) error { tk.Result = "r"; return nil }},
		{tfn: func(tk *task.Task) error { tk.Error = "failed write"; return boom }, wantErr: boom},
		{tfn: func(tk *task.Task) error { tk.ToolUses = 9; return nil }},
		{sfn: func(s *session.Info) error { s.Title = "t"; return nil }},
		{sfn: func(s *session.Info) error { s.NumTurns = 7; return nil },
			tfn: func(tk *task.Task) error { tk.Notified = true; return nil }},
		{sfn: func(s *session.Info) error { s.Cwd = "/failed"; return nil },
			tfn: func(tk *task.Task) error { tk.Owner = "failed"; return boom }, wantErr: boom},
	}
	all := whenQueued(db, len(updates))
	release := blockWriter(t, db)
	before := db.Stats()
	errs := make([]error, len(updates))
	var wg sync.WaitGroup
	for i, u := range updates {
		wg.Go(func() {
			switch {
			case u.sfn == nil:
				_, errs[i] = db.UpdateTask(ctx, "t1", u.tfn)
			case u.tfn == nil:
				errs[i] = db.UpdateSession(ctx, "t1", u.sfn)
			default:
				_, errs[i] = db.UpdateSessionTask(ctx, "t1", u.sfn, "t1", u.tfn)
			}
		})
	}
	wait(t, all, "the updates to queue")
	if err := release(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, u := range updates {
		if !errors.Is(errs[i], u.wantErr) {
			t.Errorf("update %d: err = %v, want %v", i, errs[i], u.wantErr)
		}
	}
	// The blocking write's commit, then one for all the updates.
	if got := db.Stats().Commits - before.Commits; got != 2 {
		t.Errorf("%d commits, want 2", got)
	}

	wantTask := sample
	wantTask.Progress, wantTask.Result, wantTask.ToolUses, wantTask.Notified = "p", "r", 9, true
	if got, err := db.GetTask(ctx, "t1"); err != nil || !cmp.Equal(tablerow.NormalizeTask(wantTask), got, timeEqual) {
		t.Errorf("task: %v (-want +got):\n%s", err, cmp.Diff(tablerow.NormalizeTask(wantTask), got, timeEqual))
	}
	wantSession := info("t1")
	wantSession.Title, wantSession.NumTurns = "t", 7
	if got, err := db.GetSession(ctx, "t1"); err != nil || !cmp.Equal(wantSession, got, timeEqual) {
		t.Errorf("session: %v (-want +got):\n%s", err, cmp.Diff(wantSession, got, timeEqual))
	}
}

func TestChangedSet(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	cols := []string{"a", "b", "c"}
	for _, c := range []struct {
		name          string
		before, after []any
		want          string
		wantArgs      []any
	}{
		{"none", []any{"x", int64(1), ms(5)}, []any{"x", int64(1), ms(5)}, "", nil},
		{"one", []any{"x", int64(1), ms(5)}, []any{"x", int64(2), ms(5)},
			"UPDATE t SET b = ? WHERE id = ?", []any{int64(2), "id"}},
		{"a time set", []any{"x", int64(1), nil}, []any{"x", int64(1), ms(5)},
			"UPDATE t SET c = ? WHERE id = ?", []any{ms(5), "id"}},
		{"a time cleared", []any{"x", int64(1), ms(5)}, []any{"x", int64(1), (*int64)(nil)},
			"UPDATE t SET c = ? WHERE id = ?", []any{(*int64)(nil), "id"}},
		{"two", []any{"x", int64(1), ms(5)}, []any{"y", int64(1), ms(6)},
			"UPDATE t SET a = ?, c = ? WHERE id = ?", []any{"y", ms(6), "id"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// tablerow's nil times are typed: (*int64)(nil).
			for _, vs := range [][]any{c.before, c.after} {
				if vs[2] == nil {
					vs[2] = (*int64)(nil)
				}
			}
			q, args := changedSet("t", cols, c.before, c.after, "id")
			if q != c.want || !cmp.Equal(args, c.wantArgs) {
				t.Errorf("changedSet = %q %v, want %q %v", q, args, c.want, c.wantArgs)
			}
		})
	}
}

// The column lists agree with tablerow's values, which the updates pair
// them with by position.
func TestColumnLists(t *testing.T) {
	if n, v := len(taskColumns), len(tablerow.TaskValues(task.Task{})); n != v {
		t.Errorf("%d task columns after id, %d values", n, v)
	}
	if n, v := len(sessionColumns), len(tablerow.SessionValues(session.Info{})); n != v {
		t.Errorf("%d session columns after id, %d values", n, v)
	}
	if taskColumns[0] != "kind" || taskColumns[len(taskColumns)-1] != "remote_task_id" {
		t.Errorf("task columns: %q", taskColumns)
	}
}
