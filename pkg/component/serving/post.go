package serving

import (
	"errors"
	"io"
	"net/http"
)

// ReadPost reads the body of a webhook's request, a POST of at most max
// bytes, as both programs' webhooks (the injector's AdmissionReview, the
// conversion's ConversionReview) take them. It answers the request itself
// and returns ok false when it is not one: 405 for another method (the
// message says "POST " and what), 413 for a body past max, 400 for one
// that cannot be read. The bound holds here too for a handler not behind
// LimitConcurrency.
func ReadPost(w http.ResponseWriter, r *http.Request, max int64, what string) (body []byte, ok bool) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST "+what, http.StatusMethodNotAllowed)
		return nil, false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		code := http.StatusBadRequest
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			code = http.StatusRequestEntityTooLarge
		}
		http.Error(w, err.Error(), code)
		return nil, false
	}
	return body, true
}
