package conversion

import (
	"context"
	"fmt"
	"sync"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	v2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/component/crdschema"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// CRDName is the Network CRD, whose v2 schema a v1 write is checked
// against.
const CRDName = "networks.samplecrd.k8s.io"

// Stored is what the webhook reads of the API server to check a v1 write:
// the Network as it is stored, and the schema the API server holds v2
// writes to.
type Stored interface {
	// Network is namespace/name as stored, read in v2 (the stored
	// version: reading it asks this webhook nothing), or nil when there
	// is none.
	Network(ctx context.Context, namespace, name string) (*v2.Network, error)
	// Schema is v2's schema in the CRD the API server serves.
	Schema(ctx context.Context) (*crdschema.Schema, error)
}

// APIServer is Stored read from the API server: the installed CRD, not a
// copy built into the program, so that what the webhook refuses is what
// the API server refuses of a v2 writer, whichever release installed it.
// Its schema is compiled once per CRD generation.
type APIServer struct {
	Networks clientset.Interface
	CRDs     apiextensionsclient.Interface

	mu         sync.Mutex
	generation int64
	schema     *crdschema.Schema
}

// NewAPIServer is Stored read through cfg, with clients of its own and no
// client-side rate limit: each of its reads answers a v1 write that the
// API server has already admitted, under its own priority and fairness,
// for the writer's user. A limit shared here would instead let one
// namespace's burst of v1 writes hold every other namespace's behind it.
func NewAPIServer(cfg *rest.Config) (*APIServer, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.RateLimiter = -1, nil
	networks, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("the conversion webhook's Network client: %w", err)
	}
	crds, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("the conversion webhook's CRD client: %w", err)
	}
	return &APIServer{Networks: networks, CRDs: crds}, nil
}

// Network implements Stored.
func (a *APIServer) Network(ctx context.Context, namespace, name string) (*v2.Network, error) {
	n, err := a.Networks.SamplecrdV2().Networks(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the stored Network: %w", err)
	}
	return n, nil
}

// Schema implements Stored. The CRD is read every time (one small GET):
// a CRD changed since is compiled again.
func (a *APIServer) Schema(ctx context.Context) (*crdschema.Schema, error) {
	crd, err := a.CRDs.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, CRDName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading CRD %s: %w", CRDName, err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.schema != nil && a.generation == crd.Generation {
		return a.schema, nil
	}
	s, err := crdschema.New(crd, v2.SchemeGroupVersion.Version)
	if err != nil {
		return nil, err
	}
	a.schema, a.generation = s, crd.Generation
	return s, nil
}
