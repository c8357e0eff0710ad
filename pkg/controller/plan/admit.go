package plan

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"

	samplecrdv1 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v1"
	samplecrdv2 "github.com/samplecrd/network-controller/pkg/apis/samplecrd/v2"
	"github.com/samplecrd/network-controller/pkg/controller/reconcile"
	clientset "github.com/samplecrd/network-controller/pkg/generated/clientset/versioned"
	"github.com/samplecrd/network-controller/pkg/generated/clientset/versioned/scheme"
)

// ReadNetworks reads the Networks of a YAML or JSON stream of manifests
// (kubectl apply -f's), in order, as v2 Networks: a samplecrd.k8s.io/v1
// one is converted by the scheme's conversion, the API server's own (a v1
// Network is a v2 Network with one subnet). Every other kind is returned
// in others, as "Kind name", for the caller to say it was skipped.
func ReadNetworks(r io.Reader) (networks []*samplecrdv2.Network, others []string, _ error) {
	dec := yaml.NewYAMLOrJSONDecoder(bufio.NewReader(r), 4096)
	for {
		var raw runtime.RawExtension
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return networks, others, nil
		} else if err != nil {
			return nil, nil, fmt.Errorf("reading the manifests: %w", err)
		}
		n, other, err := decodeNetwork(raw.Raw)
		switch {
		case err != nil:
			return nil, nil, fmt.Errorf("reading the manifests: %w", err)
		case other != "":
			others = append(others, reconcile.Printable(other)) // a line of stderr
		case n != nil:
			networks = append(networks, n)
		}
	}
}

// decodeNetwork is the Network of one manifest, in v2's terms; other is
// "Kind name (apiVersion)" of a manifest of another kind or version; both
// are empty for an empty document (between two "---").
func decodeNetwork(data []byte) (_ *samplecrdv2.Network, other string, _ error) {
	var meta struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
	}
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		return nil, "", nil
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		return nil, "", err
	}
	var into runtime.Object
	switch {
	case meta.Kind == "" && meta.APIVersion == "" && meta.Name == "":
		return nil, "", nil
	case meta.Kind != "Network":
	case meta.APIVersion == samplecrdv2.SchemeGroupVersion.String():
		into = &samplecrdv2.Network{}
	case meta.APIVersion == samplecrdv1.SchemeGroupVersion.String():
		into = &samplecrdv1.Network{}
	}
	if into == nil {
		return nil, fmt.Sprintf("%s %s (%s)", meta.Kind, meta.Name, meta.APIVersion), nil
	}
	if err := json.Unmarshal(data, into); err != nil {
		return nil, "", err
	}
	if n, ok := into.(*samplecrdv2.Network); ok {
		return n, "", nil
	}
	var out samplecrdv2.Network
	if err := scheme.Scheme.Convert(into, &out, nil); err != nil {
		return nil, "", fmt.Errorf("converting Network %s to %s: %w", meta.Name, samplecrdv2.SchemeGroupVersion, err)
	}
	return &out, "", nil
}

// ErrAPIServerRefused wraps the API server's refusal of a planned Network:
// its schema, CEL rules or an admission webhook refuse it, so the
// controller would never see it.
var ErrAPIServerRefused = errors.New("the API server refuses it")

// Admit returns the Network as the API server would store it — defaults
// filled in, validated by the schema and CEL, generation bumped when the
// spec changes — with a dry-run create, or a dry-run update of the live
// Network's spec: exists says which. The API server stores nothing.
func Admit(ctx context.Context, client clientset.Interface, network *samplecrdv2.Network) (_ *samplecrdv2.Network, exists bool, _ error) {
	networks := client.SamplecrdV2().Networks(network.Namespace)
	dryRun := []string{metav1.DryRunAll}
	live, err := networks.Get(ctx, network.Name, metav1.GetOptions{})
	var stored *samplecrdv2.Network
	switch {
	case apierrors.IsNotFound(err):
		want := &samplecrdv2.Network{ObjectMeta: metav1.ObjectMeta{Name: network.Name, Namespace: network.Namespace,
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
