// Package chromium drives Debian's headless chromium for the web view's
// end-to-end tests, over the DevTools protocol on a pipe
// (--remote-debugging-pipe): no WebSocket, no library, no port.
//
// Why not --dump-dom and --screenshot alone: both act at the page's load
// event, before the page's scripts have fetched anything, and
// --virtual-time-budget, which would let them run, never elapses while a
// fetch is pending — and a live page always has its event stream open.
// Over the protocol a test waits for what it wants to see (a condition in
// the page, awaited as a promise), then takes the DOM (what --dump-dom
// prints) and a screenshot (what --screenshot writes).
package chromium
