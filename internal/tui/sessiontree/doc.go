// Package sessiontree is the session tree screen of cadre's terminal
// interface (issue 11 item 6, DESIGN S-I4): one session's transcript —
// live while it runs — with its parent, siblings and children one key
// away, and a message to send it. Finished sessions open too.
// Runtime.SessionTree and Runtime.WatchSession do the work.
package sessiontree
