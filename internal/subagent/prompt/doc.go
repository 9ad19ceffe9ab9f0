// Package prompt holds the text helpers the spawn core and its tool
// profiles share: model-facing templates parsed on first use and rendered
// on tmplexec, one-line and clipped text, and the framing of a child's
// text (DESIGN §17) — Escape, so that it can neither close the runtime's
// tags nor open its own, and Untrusted, the note that tells the parent it
// carries no user authority.
package prompt
