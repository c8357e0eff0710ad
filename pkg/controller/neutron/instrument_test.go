package neutron

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnAnswerPastTheBoundFailsItsRequest specifies the bound on one
// Neutron answer (MaxResponseBytes, here 4 KiB): gophercloud reads an
// answer whole, so an answer of any size would be held whole, in the
// process every namespace shares. One within the bound is read as ever;
// one past it fails its list with an *http.MaxBytesError.
func TestAnAnswerPastTheBoundFailsItsRequest(t *testing.T) {
	const bound = 4 << 10
	tests := []struct {
		name    string
		size    int // the answer's length in bytes, about
		wantErr bool
	}{
		{name: "an answer within the bound", size: bound / 2},
		{name: "an answer past the bound", size: 4 * bound, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"networks": [{"id": "n", "name": %q}]}`, strings.Repeat("x", tt.size))
			}))
			defer srv.Close()
			bounded := &http.Client{Transport: instrumentedTransport{next: http.DefaultTransport, reach: &Reachability{}, maxBody: bound}}
			client, err := NewNoAuthServiceClient(srv.URL, bounded)
			if err != nil {
				t.Fatal(err)
			}

			err = NewGophercloud(client, Place{}).ListNetworks(context.Background(), "", func([]Network) error { return nil })
			var tooLarge *http.MaxBytesError
			if got := errors.As(err, &tooLarge); got != tt.wantErr {
				t.Errorf("err = %v, want an *http.MaxBytesError: %t", err, tt.wantErr)
			}
		})
	}
}
