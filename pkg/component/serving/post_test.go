package serving

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadPostTakesOnlyABoundedPost specifies what a webhook of either
// program reads: a POST's body of at most the bound, and nothing else,
// each refusal answered with its own code.
func TestReadPostTakesOnlyABoundedPost(t *testing.T) {
	const bound = 16
	tests := []struct {
		name     string
		method   string
		body     string
		wantOK   bool
		wantCode int
	}{
		{name: "a POST within the bound", method: http.MethodPost, body: strings.Repeat("x", bound), wantOK: true, wantCode: http.StatusOK},
		{name: "a GET", method: http.MethodGet, wantCode: http.StatusMethodNotAllowed},
		{name: "a POST past the bound", method: http.MethodPost, body: strings.Repeat("x", bound+1), wantCode: http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			body, ok := ReadPost(w, httptest.NewRequest(tt.method, "/", strings.NewReader(tt.body)), bound, "a review")
			if ok != tt.wantOK || w.Code != tt.wantCode {
				t.Errorf("ok = %t, code %d, want %t, %d", ok, w.Code, tt.wantOK, tt.wantCode)
			}
			if ok && string(body) != tt.body {
				t.Errorf("body = %q, want %q", body, tt.body)
			}
		})
	}
}
