package api

import "net/http"

// Unguarded returns the routes of h, a handler NewServer returned, as they
// serve a request that has passed guard, but without guard: no host,
// origin, token or rate check, and no identity. It exists in this
// package's tests alone, so that the ingest benchmark can measure what
// authentication costs; nothing that ships can serve the API without it.
func Unguarded(h http.Handler) http.Handler { return h.(*Server).mux }
