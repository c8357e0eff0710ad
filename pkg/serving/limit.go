package serving

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"time"
)

// LimitConcurrency serves at most n requests of h at once. A request's
// body, at most maxBody bytes, is read in full before it asks for a slot:
// a client that sends slowly holds its own connection (until the server's
// ReadTimeout), never one of the n slots the API server's own requests
// need. A request that finds n under way waits up to wait for one to
// finish, then gets 503 (and onRefuse is told): an overloaded server says
// so quickly, and the caller (the API server, for a webhook) sees a clear
// answer, instead of every request slowing down until all of them time
// out.
func LimitConcurrency(h http.Handler, n int, maxBody int64, wait time.Duration, onRefuse func()) http.Handler {
	slots := make(chan struct{}, n)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			code := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				code = http.StatusRequestEntityTooLarge
			}
			http.Error(w, err.Error(), code)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		select {
		case slots <- struct{}{}:
		default:
			timer := time.NewTimer(wait)
			defer timer.Stop()
			select {
			case slots <- struct{}{}:
			case <-timer.C:
				refuse(w, onRefuse)
				return
			case <-r.Context().Done():
				refuse(w, onRefuse)
				return
			}
		}
		defer func() { <-slots }()
		h.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, onRefuse func()) {
	if onRefuse != nil {
		onRefuse()
	}
	w.Header().Set("Retry-After", "1")
	http.Error(w, "too many requests under way; try again", http.StatusServiceUnavailable)
}
