package inventory

import (
	"fmt"
	"sort"
	"strings"
)

// Report lists the items in name order, one per line.
func (s Stock) Report() string {
	names := make([]string, 0, len(s))
	for name := range s {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		// TODO: flag items that are running low (fewer than 3 left).
		fmt.Fprintf(&b, "%-10s %3d\n", name, s[name])
	}
	return b.String()
}
