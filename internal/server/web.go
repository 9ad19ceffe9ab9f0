package server

import (
	"embed"
	"io/fs"
	"net/http"
)

//go:embed web
var webFiles embed.FS

// webHandler serves the web view: static files embedded in the binary.
func webHandler() http.Handler {
	sub, err := fs.Sub(webFiles, "web")
	if err != nil {
		panic(err) // the embedded tree always has web/
	}
	return http.FileServerFS(sub)
}
