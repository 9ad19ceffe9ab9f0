package sqlite

import (
	"strings"

	"github.com/cadre-dev/cadre/internal/store/tablerow"
)

// An update reads a row, lets the caller change it, and writes back only
// the columns whose values changed. Setting a column, even to the value it
// holds, makes SQLite rewrite the entry of every index that covers the
// column (the choice is made when the statement is compiled, from the SET
// list alone): with every column set, each end of a background task
// rewrote the tasks table's five secondary indexes, where its status is in
// one. An update that changes nothing writes nothing: no page is dirtied
// and the commit that holds it has nothing to write for it.

// The columns after id, in the order of tablerow's values. Read-only.
var (
	taskColumns    = tablerow.TaskColumnNames[1:]
	sessionColumns = tablerow.SessionColumnNames[1:]
)

// changedSet returns the UPDATE of table's row id setting the columns whose
// value differs between before and after (values in cols' order) and its
// arguments, or "" when nothing changed. The statement's text depends only
// on which columns changed, so the few sets that occur are each prepared
// once (stmtCache).
func changedSet(table string, cols []string, before, after []any, id string) (string, []any) {
	idx := tablerow.Changed(before, after)
	if len(idx) == 0 {
		return "", nil
	}
	var b strings.Builder
	args := make([]any, 0, len(idx)+1)
	b.WriteString("UPDATE " + table + " SET ")
	for n, i := range idx {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(cols[i] + " = ?")
		args = append(args, after[i])
	}
	b.WriteString(" WHERE id = ?")
	return b.String(), append(args, id)
}
