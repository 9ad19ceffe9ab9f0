// Package render draws text for cadre's terminal interface (internal/tui
// and its screens): the styles they share, untrusted text made safe to
// draw (Clean), the assistant's Markdown, tool calls and results folded
// to a line, unified diffs, compact tables, and figures as people read
// them (elapsed times, token counts). Every function is pure: it takes
// text and a width and returns the lines to draw.
package render
