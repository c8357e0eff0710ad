package plan

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
)

// ReadNetworks reads the Networks of a YAML or JSON stream of manifests
// (kubectl apply -f's), in order; every other kind is returned in others,
// as "Kind name", for the caller to say it was skipped.
func ReadNetworks(r io.Reader) (networks []*samplecrdv1.Network, others []string, _ error) {
	dec := yaml.NewYAMLOrJSONDecoder(bufio.NewReader(r), 4096)
	for {
		var n samplecrdv1.Network
		if err := dec.Decode(&n); errors.Is(err, io.EOF) {
			return networks, others, nil
		} else if err != nil {
			return nil, nil, fmt.Errorf("reading the manifests: %w", err)
		}
		switch {
		case n.Kind == "" && n.APIVersion == "" && n.Name == "":
			// An empty document, between two "---".
		case n.APIVersion != samplecrdv1.SchemeGroupVersion.String() || n.Kind != "Network":
			others = append(others, reconcile.Printable(fmt.Sprintf("%s %s (%s)", n.Kind, n.Name, n.APIVersion))) // a line of stderr
		default:
			networks = append(networks, &n)
		}
	}
}

// ErrAPIServerRefused wraps the API server's refusal of a planned Network:
// its schema, CEL rules or an admission webhook refuse it, so the
// controller would never see it.
var ErrAPIServerRefused = errors.New("the API server refuses it")

// Admit returns the Network as the API server would store it — defaults
// filled in, validated by the schema and CEL, generation bumped when the
// spec changes — with a dry-run create, or a dry-run update of the live
// Network's spec: exists says which. The API server stores nothing.
func Admit(ctx context.Context, client clientset.Interface, network *samplecrdv1.Network) (_ *samplecrdv1.Network, exists bool, _ error) {
	networks := client.SamplecrdV1().Networks(network.Namespace)
	dryRun := []string{metav1.DryRunAll}
	live, err := networks.Get(ctx, network.Name, metav1.GetOptions{})
	var stored *samplecrdv1.Network
	switch {
	case apierrors.IsNotFound(err):
		want := &samplecrdv1.Network{ObjectMeta: metav1.ObjectMeta{Name: network.Name, Namespace: network.Namespace,
			Labels: network.Labels, Annotations: network.Annotations}, Spec: network.Spec}
		stored, err = networks.Create(ctx, want, metav1.CreateOptions{DryRun: dryRun})
	case err != nil:
		return nil, false, fmt.Errorf("reading Network %s/%s: %w", network.Namespace, network.Name, err)
	default:
		exists = true
		want := live.DeepCopy()
		want.Spec = network.Spec
		stored, err = networks.Update(ctx, want, metav1.UpdateOptions{DryRun: dryRun})
	}
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		return nil, exists, fmt.Errorf("%w: %w", ErrAPIServerRefused, err)
	}
	if err != nil {
		return nil, exists, fmt.Errorf("asking the API server for a dry run of Network %s/%s: %w", network.Namespace, network.Name, err)
	}
	return stored, exists, nil
}

// ErrWriteRefused is what ReadOnly answers a request that would change
// something.
var ErrWriteRefused = errors.New("network-controller plan writes nothing: refused a request that is neither a read nor a dry run")

// ReadOnly is a transport (rest.Config.Wrap) that sends to the API server
// only reads and dry runs: whatever the code above it asks, a plan cannot
// change the cluster.
func ReadOnly(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Method != http.MethodGet && req.URL.Query().Get("dryRun") != metav1.DryRunAll {
			return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, ErrWriteRefused)
		}
		return rt.RoundTrip(req)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
