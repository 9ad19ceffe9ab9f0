// Package config loads cadre's layered JSON settings.
//
// Layers, later winning: the user's $CADRE_HOME/settings.json (CADRE_HOME
// defaults to ~/.cadre), the project's <cwd>/.cadre/settings.json, the
// local <cwd>/.cadre/settings.local.json (meant to stay out of version
// control), then command-line flags.
//
// Merging: a scalar a layer sets replaces the earlier value (null counts as
// not set); maps (aliases, providers, pricing, env) merge by key, a later
// entry replacing an earlier one whole; permission lists (allow, ask, deny,
// additionalDirectories) are concatenated across layers, first occurrence
// kept; subagents and agents are kept raw, a later layer replacing them.
// Flags: --allowedTools appends to permissions.allow, --disallowedTools to
// permissions.deny, --permission-mode sets permissions.defaultMode, and
// --model and --max-turns set their settings.
//
// A missing file is not an error. Unknown keys are warnings naming the file
// and key path (so a typo never goes unnoticed, and an older cadre reads a
// newer file); wrong types and invalid values are errors naming the file,
// the key path and what was expected. The walk that finds both follows the
// Settings struct's json tags, so new fields are covered as they are added.
// A file holding only whitespace counts as an empty object.
package config
