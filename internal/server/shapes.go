package server

import "github.com/cadre-dev/cadre"

// SessionJSON is a session as the HTTP API writes it (GET /api/sessions).
// `cadre sessions --json` writes the same shape, from this one
// definition, so that a script reads a session alike from both.
type SessionJSON = sessionJSON

// SessionOf is s in the API's shape, as a session no run of a server is
// holding (live false).
func SessionOf(s cadre.Session) SessionJSON { return sessionOf(s) }
