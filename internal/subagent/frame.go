package subagent

import "github.com/cadre-dev/cadre/internal/frame"

// A child's text reaches its parent escaped and framed (internal/frame):
// data, never instructions.

// untrustedNote is the preamble that frames a child's text.
var untrustedNote = frame.Untrusted()

// escapeTags keeps a child's text from opening or closing tags.
func escapeTags(s string) string { return frame.Escape(s) }
