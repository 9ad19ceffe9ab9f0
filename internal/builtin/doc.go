// Package builtin holds cadre's built-in coding tools — Read, Write, Edit,
// Glob, Grep, LS and Bash — with Claude Code's tool names and input schemas,
// because models are trained to call those exactly.
//
// Every tool resolves relative paths against tool.Env.Cwd, expands a leading
// "~/" to the home directory, and reports the absolute path (or, for Bash,
// the command) it touches through tool.Targeted so that permission rules can
// match it. Failures the model can fix (a missing file, an ambiguous
// old_string, a bad regexp) come back as error results explaining what to do;
// only unexpected failures are returned as Go errors.
package builtin
