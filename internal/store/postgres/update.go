package postgres

import (
	"strconv"
	"strings"

	"github.com/cadre-dev/cadre/internal/store/tablerow"
)

// An update sets only the columns whose values changed between the row it
// read (or remembers, known.go) and the row it writes. The server then
// binds, projects and checks those alone: a background child's start sets
// two of a task's thirty columns, its end about ten of each row; with
// every column set, the executor's set-up of the two wide UPDATEs of its
// end took more of the server's time than their writes. The statement's
// text depends only on which columns changed, so the few sets that occur
// are each prepared once a connection (pgx's statement cache).

// params numbers a statement's parameters in the order they are added.
type params []any

// add adds v and returns its placeholder.
func (p *params) add(v any) string {
	*p = append(*p, v)
	return "$" + strconv.Itoa(len(*p))
}

// set is the SET list of an update from before to after, values of the
// columns of names after the first (the id): the columns that changed,
// each a parameter added to p. When none changed it sets the first to its
// value, so that the row is written all the same: the statement's
// RETURNING (and, on a remembered row, its match) tells the row's version.
func (p *params) set(names []string, before, after []any) string {
	changed := tablerow.Changed(before, after)
	if len(changed) == 0 {
		changed = []int{0}
	}
	var b strings.Builder
	for n, i := range changed {
		if n > 0 {
			b.WriteString(", ")
		}
		b.WriteString(names[i+1] + " = " + p.add(after[i]))
	}
	return b.String()
}

// updateSQL is the update of table's row id from before to after, only
// while it is the version xmin when xmin is not nil (known.go); it
// returns the new version.
func updateSQL(table string, names []string, before, after []any, id string, xmin *uint32) (string, params) {
	var p params
	q := `UPDATE ` + table + ` SET ` + p.set(names, before, after) + ` WHERE id = ` + p.add(id)
	if xmin != nil {
		q += ` AND xmin = ` + p.add(*xmin)
	}
	return q + ` RETURNING xmin`, p
}
