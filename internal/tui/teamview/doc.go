// Package teamview is the team screen of cadre's terminal interface
// (issue 26, docs/tui.md "The team"): the roster of the team the main
// agent leads — each teammate's name, agent type, state and task — and
// the shared task list as a board, redrawn as the team changes. From the
// roster a teammate's transcript opens and a message reaches it. The
// team and its grouping come from the runtime (cadre.Team, Board,
// Counts); this package only draws them and passes the keys on.
package teamview
