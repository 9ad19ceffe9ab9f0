// Package compact keeps a long session inside its model's context window
// (DESIGN S-F3, the first runtime service built on the internal fork).
//
// When the context passes a share of the window (Config.Needed) — the
// size the last response measured plus an estimate of the messages added
// since, or an estimate of the whole history where nothing measured it
// (loop.Measured.Context) — Compact has the older messages summarised — by a
// Summarizer, which the runtime implements as a forked model run — and
// replaces them by one user message holding the summary, marked with
// <context-summary> tags. The most recent messages stay verbatim, and the
// split never separates a tool call from its result, so the new history is
// as valid for a provider as the old one.
//
// Hook adapts the two to the loop's Config.Compact; the loop reports the
// summary as a Step, the runner records it in the transcript as a
// compact_boundary entry, and session.Messages resumes from that entry.
package compact
