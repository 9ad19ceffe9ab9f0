// Package runlog is a subagent run's output as readers get it: a
// plain-text log of what the run does — its text, its tool calls (→) and
// their results (←), the messages it is sent — ended, once the run ended,
// by its status and result.
//
// A run started in the background writes no log file: its output file is
// a second name (a hard link) of its transcript (LinkOutput), so a child
// leaves one file and a model reading it sees the transcript, as Claude
// Code's readers see theirs. A reader in another process gets the log
// rendered from it (FromTranscript). A run moved to the background after
// it started, or where the link cannot be made (another filesystem),
// writes a log file (OpenFile) line by line (Message).
package runlog
