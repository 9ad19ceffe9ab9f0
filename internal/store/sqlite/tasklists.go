package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/cadre-dev/cadre/internal/tasklist"
)

var _ tasklist.Store = (*DB)(nil)

// One statement reads a list and its items, so a read sees one snapshot.
const selectTaskListSQL = `SELECT l.next_item, l.roster, i.item FROM task_lists l
	LEFT JOIN task_list_items i ON i.list = l.id
	WHERE l.id = ? ORDER BY i.seq`

// GetList implements tasklist.Store.
func (db *DB) GetList(ctx context.Context, id string) (tasklist.List, error) {
	if err := tasklist.ValidListID(id); err != nil {
		return tasklist.List{}, err
	}
	rows, err := db.rs.query(ctx, selectTaskListSQL, id)
	if err != nil {
		return tasklist.List{}, fmt.Errorf("get task list %q: %w", id, err)
	}
	l, err := scanTaskList(id, rows)
	if err != nil {
		return tasklist.List{}, fmt.Errorf("get task list %q: %w", id, err)
	}
	return l, nil
}

// UpdateList implements tasklist.Store: the read, fn and the writes share
// one IMMEDIATE transaction of the writer, which holds SQLite's write lock
// across processes from before the read to the commit.
func (db *DB) UpdateList(ctx context.Context, id string, fn func(*tasklist.List) error) (tasklist.List, error) {
	if err := tasklist.ValidListID(id); err != nil {
		return tasklist.List{}, err
	}
	var out tasklist.List
	err := db.write(ctx, func(tx *wtx) error {
		rows, err := tx.query(selectTaskListSQL, id)
		if err != nil {
			return err
		}
		before, err := scanTaskList(id, rows)
		if err != nil {
			return err
		}
		l := before.Clone()
		if err := fn(&l); err != nil {
			return err
		}
		l.ID = id
		if err := writeTaskList(tx, before, l); err != nil {
			return err
		}
		out = l
		return nil
	})
	if err != nil {
		return tasklist.List{}, fmt.Errorf("update task list %q: %w", id, err)
	}
	return out, nil
}

func scanTaskList(id string, rows *sql.Rows) (tasklist.List, error) {
	defer rows.Close()
	l := tasklist.List{ID: id, Next: 1}
	for rows.Next() {
		var item sql.NullString
		var roster string
		if err := rows.Scan(&l.Next, &roster, &item); err != nil {
			return l, err
		}
		if l.Roster == nil { // every row repeats the list's
			var err error
			if l.Roster, err = tasklist.DecodeRoster([]byte(roster)); err != nil {
				return l, err
			}
		}
		if !item.Valid {
			continue // a list without items
		}
		var it tasklist.Item
		if err := json.Unmarshal([]byte(item.String), &it); err != nil {
			return l, fmt.Errorf("a stored item: %w", err)
		}
		l.Items = append(l.Items, it)
	}
	return l, rows.Err()
}

// writeTaskList writes what changed from before to after: the list's row,
// the items whose JSON changed, and the items that are gone.
func writeTaskList(tx *wtx, before, after tasklist.List) error {
	roster, err := tasklist.EncodeRoster(after.Roster)
	if err != nil {
		return err
	}
	if _, err := tx.exec(`INSERT INTO task_lists (id, next_item, updated_ms, roster) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET next_item = excluded.next_item, updated_ms = excluded.updated_ms, roster = excluded.roster`,
		after.ID, after.Next, time.Now().UnixMilli(), string(roster)); err != nil {
		return err
	}
	old := map[string][]byte{}
	for _, it := range before.Items {
		b, _ := json.Marshal(it)
		old[it.ID] = b
	}
	for _, it := range after.Items {
		b, err := json.Marshal(it)
		if err != nil {
			return fmt.Errorf("item #%s: %w", it.ID, err)
		}
		prev, had := old[it.ID]
		delete(old, it.ID)
		if had && string(prev) == string(b) {
			continue
		}
		seq, err := strconv.Atoi(it.ID)
		if err != nil {
			return fmt.Errorf("item id %q is not a number", it.ID)
		}
		if _, err := tx.exec(`INSERT INTO task_list_items (list, id, seq, item) VALUES (?, ?, ?, ?)
			ON CONFLICT (list, id) DO UPDATE SET item = excluded.item`, after.ID, it.ID, seq, string(b)); err != nil {
			return err
		}
	}
	for id := range old {
		if _, err := tx.exec(`DELETE FROM task_list_items WHERE list = ? AND id = ?`, after.ID, id); err != nil {
			return err
		}
	}
	return nil
}
