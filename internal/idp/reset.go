package idp

import "net/http"

func (s *Server) resetPage(w http.ResponseWriter, r *http.Request) {
	s.errorPage(w, http.StatusNotFound, r.URL.Query().Get("language"), "not_found", "password reset is not configured")
}

func (s *Server) resetPost(w http.ResponseWriter, r *http.Request) { s.resetPage(w, r) }
