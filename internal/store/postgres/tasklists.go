package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/cadre-dev/cadre/internal/tasklist"
)

var _ tasklist.Store = (*DB)(nil)

// TaskListChannel is the LISTEN/NOTIFY channel on which every committed
// change of a task list is announced, with the list's id as the payload:
// teammates on other nodes hear a claim or a completion at once.
const TaskListChannel = "cadre_task_list"

// One statement reads a list and its items: one snapshot.
const selectTaskListSQL = `SELECT l.next_item, l.roster, i.item FROM task_lists l
	LEFT JOIN task_list_items i ON i.list = l.id
	WHERE l.id = $1 ORDER BY i.seq`

// GetList implements tasklist.Store.
func (db *DB) GetList(ctx context.Context, id string) (tasklist.List, error) {
	if err := tasklist.ValidListID(id); err != nil {
		return tasklist.List{}, err
	}
	var l tasklist.List
	err := db.query(ctx, func(rows pgx.Rows) (err error) {
		l, err = scanTaskList(id, rows)
		return err
	}, selectTaskListSQL, id)
	if err != nil {
		return tasklist.List{}, fmt.Errorf("get task list %q: %w", id, err)
	}
	return l, nil
}

// UpdateList implements tasklist.Store: the list's row is created if need
// be and read FOR UPDATE, with the items, in the first round trip; the
// writes, the notification and COMMIT go in the second (rmw). The row lock
// makes every other node's update of the list wait for this one's commit,
// then read what it wrote.
func (db *DB) UpdateList(ctx context.Context, id string, fn func(*tasklist.List) error) (tasklist.List, error) {
	if err := tasklist.ValidListID(id); err != nil {
		return tasklist.List{}, err
	}
	var before, after tasklist.List
	reads := func(b *pgx.Batch) {
		b.Queue(`INSERT INTO task_lists (id, next_item) VALUES ($1, 1) ON CONFLICT (id) DO NOTHING`, id)
		b.Queue(`SELECT next_item, roster FROM task_lists WHERE id = $1 FOR UPDATE`, id)
		b.Queue(`SELECT i.item FROM task_list_items i WHERE i.list = $1 ORDER BY i.seq`, id)
	}
	scan := func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		before = tasklist.List{ID: id}
		var roster []byte
		if err := br.QueryRow().Scan(&before.Next, &roster); err != nil {
			return err
		}
		var err error
		if before.Roster, err = tasklist.DecodeRoster(roster); err != nil {
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var it tasklist.Item
			if err := rows.Scan(&it); err != nil {
				return fmt.Errorf("a stored item: %w", err)
			}
			before.Items = append(before.Items, it)
		}
		return rows.Err()
	}
	writes := func(b *pgx.Batch) error {
		after = before.Clone()
		if err := fn(&after); err != nil {
			return err
		}
		after.ID = id
		return queueTaskListWrites(b, before, after)
	}
	if err := db.rmw(ctx, reads, scan, writes); err != nil {
		return tasklist.List{}, fmt.Errorf("update task list %q: %w", id, err)
	}
	return after, nil
}

func scanTaskList(id string, rows pgx.Rows) (tasklist.List, error) {
	l := tasklist.List{ID: id, Next: 1}
	for rows.Next() {
		var item, roster []byte
		if err := rows.Scan(&l.Next, &roster, &item); err != nil {
			return l, err
		}
		if l.Roster == nil { // every row repeats the list's
			var err error
			if l.Roster, err = tasklist.DecodeRoster(roster); err != nil {
				return l, err
			}
		}
		if item == nil {
			continue // a list without items
		}
		var it tasklist.Item
		if err := json.Unmarshal(item, &it); err != nil {
			return l, fmt.Errorf("a stored item: %w", err)
		}
		l.Items = append(l.Items, it)
	}
	return l, rows.Err()
}

// queueTaskListWrites queues what changed from before to after: the list's
// row, the items whose JSON changed, the items that are gone, and the
// notification (sent by the server at COMMIT, not before).
func queueTaskListWrites(b *pgx.Batch, before, after tasklist.List) error {
	old := map[string][]byte{}
	for _, it := range before.Items {
		j, _ := json.Marshal(it)
		old[it.ID] = j
	}
	changed := false
	for _, it := range after.Items {
		j, err := json.Marshal(it)
		if err != nil {
			return fmt.Errorf("item #%s: %w", it.ID, err)
		}
		prev, had := old[it.ID]
		delete(old, it.ID)
		if had && string(prev) == string(j) {
			continue
		}
		seq, err := strconv.Atoi(it.ID)
		if err != nil {
			return fmt.Errorf("item id %q is not a number", it.ID)
		}
		b.Queue(`INSERT INTO task_list_items (list, id, seq, item) VALUES ($1, $2, $3, $4)
			ON CONFLICT (list, id) DO UPDATE SET item = excluded.item`, after.ID, it.ID, seq, j)
		changed = true
	}
	for id := range old {
		b.Queue(`DELETE FROM task_list_items WHERE list = $1 AND id = $2`, after.ID, id)
		changed = true
	}
	roster, err := tasklist.EncodeRoster(after.Roster)
	if err != nil {
		return err
	}
	if was, _ := tasklist.EncodeRoster(before.Roster); string(was) != string(roster) {
		changed = true
	}
	if changed || after.Next != before.Next {
		b.Queue(`UPDATE task_lists SET next_item = $2, roster = $3, updated_at = now() WHERE id = $1`, after.ID, after.Next, roster)
		b.Queue(`SELECT pg_notify($1, $2)`, TaskListChannel, after.ID)
	}
	return nil
}
