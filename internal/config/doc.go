// Package config loads cadre's layered JSON settings.
//
// Layers, later winning: the user's $CADRE_HOME/settings.json (CADRE_HOME
// defaults to ~/.cadre), the project's <cwd>/.cadre/settings.json, the
// local <cwd>/.cadre/settings.local.json (meant to stay out of version
// control), then command-line flags.
//
// Merging: a scalar a layer sets replaces the earlier value (null counts as
// not set); maps (aliases, providers, pricing, env) merge by key, a later
// entry replacing an earlier one whole; lists (permissions allow, ask,
// deny, additionalDirectories; subagents.tools allow and deny) are
// concatenated across layers, first occurrence kept. permissions.task is
// an ordered object of agent pattern to allow, ask or deny (or one action
// for every agent), read in the file's key order; layers' rules are
// concatenated as they are, repeats included, so a later layer's rules
// come later and win (the last matching rule decides). The subagents block
// (maxSpawnDepth, surface, model, tools) merges like the rest. agents is
// kept raw for the agent package but merged by name: a later layer's
// agents.X replaces the earlier agents.X whole, other names stay.
// Flags: --allowedTools appends to permissions.allow, --disallowedTools to
// permissions.deny, --permission-mode sets permissions.defaultMode, and
// --model and --max-turns set their settings.
//
// A missing file is not an error. Unknown keys are warnings naming the file
// and key path (so a typo never goes unnoticed, and an older cadre reads a
// newer file); wrong types and invalid values are errors naming the file,
// the key path and what was expected. The walk that finds both follows the
// Settings struct's json tags, so new fields are covered as they are added.
// permissions.task keys are agent patterns, not settings keys, so they
// never warn. A value whose type decodes itself (json.Unmarshaler, such as
// the task rules) is handed the file's own text for it, since the generic
// decoding the walk works on has lost the order of its keys.
// A file holding only whitespace counts as an empty object.
package config
