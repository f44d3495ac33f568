package ui

import (
	"embed"
	"io/fs"
	"net/http"
)

// assets are the page: HTML, one script and one style sheet, embedded in
// the binary (no CDN, no build step).
//
//go:embed assets
var assets embed.FS

func assetHandler() http.Handler {
	sub, _ := fs.Sub(assets, "assets") // the directory is embedded above
	return http.StripPrefix("/assets/", http.FileServer(http.FS(sub)))
}

// serveIndex serves the page itself at "/" (and only there).
func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		writeError(w, http.StatusInternalServerError, "INTERNAL_ERROR", err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'")
	w.Write(b)
}
