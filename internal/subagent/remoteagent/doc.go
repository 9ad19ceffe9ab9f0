// Package remoteagent is what a run of a remote agent (S-W2; a definition
// with url:, reached through internal/remote) needs beyond an ordinary
// child run: its questions (INPUT_REQUIRED) asked of the user on the
// approval path (Ask), its status lines and its remote task's id kept on
// its background task's record (Recorder), and, after the cadre process
// that ran it ended, claiming its record (Reattacher) and following its
// remote task again (Follow).
package remoteagent
