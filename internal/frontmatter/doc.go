// Package frontmatter splits markdown files into YAML frontmatter and
// body, with line numbers, for the loaders of agent definitions and of
// slash commands and skills. It also holds what both need to read the
// frontmatter the way Claude Code does: quoting top-level values that
// YAML refuses, reading lists written as a YAML list or as one comma- (or
// space-) separated string, and naming YAML nodes in messages. Each loader
// keeps its own field handling and its own error type.
package frontmatter
