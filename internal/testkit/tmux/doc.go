// Package tmux drives a program inside a private tmux server, so that
// end-to-end tests can see a terminal user interface the way a user does:
// start it in a detached session of a fixed size, type literal text and
// named keys, and read the screen back with capture-pane.
//
// Every Session has its own server socket (tmux -L with a unique name) and
// reads no configuration file, so a test never sees or touches the user's
// tmux. The server, and with it the program, is killed when the test ends.
//
// tmux itself must be installed (Debian's tmux package; .ci/run installs
// it). A test that needs it and finds it missing fails under CI (CI=true),
// which must never skip it, and elsewhere skips saying so.
package tmux
