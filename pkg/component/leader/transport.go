package leader

import (
	"errors"
	"fmt"
	"net/http"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// ErrFenced is what a write returns while this replica cannot prove it
// still holds the Lease (Fence.Check): another replica may have taken over
// while this one was frozen or cut off, and acts on a fresher view.
var ErrFenced = errors.New("this replica cannot prove it still holds the leader Lease")

// WrapTransport returns a wrapper for the transport of the clients a
// leader writes to the API server with (rest.Config.Wrap): while check (a
// Fence's Check) refuses, every request that may write (any method but GET, HEAD and
// OPTIONS; a list and a watch are GETs) fails with ErrFenced before it is
// sent, and refused is called. So a leader frozen past its lease writes
// nothing to the API server, whichever code would have written: status,
// finalizers, owned objects, Events, kept credentials. The client that
// renews the Lease itself must not be wrapped.
func WrapTransport(check func() error, refused func()) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			switch req.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
				return next.RoundTrip(req)
			}
			if err := check(); err != nil {
				if req.Body != nil {
					req.Body.Close() // a RoundTripper closes the body, even on error
				}
				refused()
				return nil, fmt.Errorf("%w: %v", ErrFenced, err)
			}
			return next.RoundTrip(req)
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// FencedClients are clients of cfg that send no write while check (the
// fence) refuses (WrapTransport), refused called for each refusal: every
// client the work writes to the API server with. Only the Lease's own
// client goes without.
func FencedClients(cfg *rest.Config, check func() error, refused func()) (kubernetes.Interface, clientset.Interface, error) {
	fenced := rest.CopyConfig(cfg)
	fenced.Wrap(WrapTransport(check, refused))
	kube, err := kubernetes.NewForConfig(fenced)
	if err != nil {
		return nil, nil, fmt.Errorf("building the fenced kubernetes clientset: %w", err)
	}
	networks, err := clientset.NewForConfig(fenced)
	if err != nil {
		return nil, nil, fmt.Errorf("building the fenced network clientset: %w", err)
	}
	return kube, networks, nil
}
